"""Geography of a client country: its continent and EU membership, for the ``ip.src.*`` fields.

Country codes are ISO 3166-1 alpha-2 as the platform gives them (``T1`` is Tor,
``XX`` unknown); continents use the platform's two-letter codes (``AF``,
``AN``, ``AS``, ``EU``, ``NA``, ``OC``, ``SA``, and ``T1`` for Tor).

    >>> continent("DE"), continent("br"), continent("T1"), continent("ZZ")
    ('EU', 'SA', 'T1', '')
    >>> in_eu("FR"), in_eu("GB"), in_eu("")
    (True, False, False)
"""

from __future__ import annotations

# One line per continent: the data is short enough to read, and a table file would be
# one more thing to ship.
_BY_CONTINENT = {
    "AF": "AO BF BI BJ BW CD CF CG CI CM CV DJ DZ EG EH ER ET GA GH GM GN GQ GW KE KM LR LS LY "
    "MA MG ML MR MU MW MZ NA NE NG RE RW SC SD SH SL SN SO SS ST SZ TD TG TN TZ UG YT ZA ZM ZW",
    "AN": "AQ BV GS HM TF",
    "AS": "AE AF AM AZ BD BH BN BT CN CY GE HK ID IL IN IO IQ IR JO JP KG KH KP KR KW KZ LA LB "
    "LK MM MN MO MV MY NP OM PH PK PS QA SA SG SY TH TJ TL TM TR TW UZ VN YE",
    "EU": "AD AL AT AX BA BE BG BY CH CZ DE DK EE ES FI FO FR GB GG GI GR HR HU IE IM IS IT JE "
    "LI LT LU LV MC MD ME MK MT NL NO PL PT RO RS RU SE SI SJ SK SM UA VA XK",
    "NA": "AG AI AW BB BL BM BQ BS BZ CA CR CU CW DM DO GD GL GP GT HN HT JM KN KY LC MF MQ MS "
    "MX NI PA PM PR SV SX TC TT US VC VG VI",
    "OC": "AS AU CK FJ FM GU KI MH MP NC NF NR NU NZ PF PG PN PW SB TK TO TV UM VU WF WS",
    "SA": "AR BO BR CL CO EC FK GF GY PE PY SR UY VE",
    "T1": "T1",
}
_CONTINENT = {code: cont for cont, codes in _BY_CONTINENT.items() for code in codes.split()}

EU_MEMBERS = frozenset(
    "AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK".split()
)


def continent(country: str) -> str:
    """The continent code of ``country``, or ``""`` when unknown."""
    return _CONTINENT.get(country.upper(), "")


def in_eu(country: str) -> bool:
    """True when ``country`` is a member state of the European Union."""
    return country.upper() in EU_MEMBERS
