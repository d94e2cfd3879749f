"""workbench: a Jupyter workbench that simulates an edge-security and serverless platform.

>>> from workbench import Workbench
>>> wb = Workbench(seed=0)
>>> wb.create_zone("example.com", plan="business").plan
'business'
"""

from .core import Workbench, WorkbenchError

__all__ = ["Workbench", "WorkbenchError"]
__version__ = "0.1.0"
