"""How the workbench's JupyterLab is started: the server options beyond Jupyter's defaults.

A panel's upload (the events explorer's Your traffic tab) reaches the kernel in one
websocket message, and a Jupyter server drops a message larger than its
``websocket_max_message_size`` (10 MB unless set). ``python -m workbench lab`` and
``make lab`` pass :data:`LAB_SERVER_OPTIONS`; ``binder/postBuild`` writes
:data:`LAB_TORNADO_SETTINGS` into Binder's server config.

    >>> LAB_TORNADO_SETTINGS
    {'websocket_max_message_size': 209715200}
"""

from __future__ import annotations

import json

#: The largest upload a panel receives in the JupyterLab the workbench starts.
UPLOAD_LIMIT_MB = 200
#: The Jupyter server's tornado settings for that.
LAB_TORNADO_SETTINGS = {"websocket_max_message_size": UPLOAD_LIMIT_MB * 1024 * 1024}
#: The command-line options that give a Jupyter server those settings.
LAB_SERVER_OPTIONS = ("--ServerApp.tornado_settings=" + json.dumps(LAB_TORNADO_SETTINGS),)
