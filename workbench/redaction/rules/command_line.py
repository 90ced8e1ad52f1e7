"""Passwords on command lines (kind ``cli_password``).

* ``-u user:PASSWORD``, ``--user user:PASSWORD``, ``--proxy-user``, ``-U`` (curl and the
  like; also quoted, glued or after ``=``) and HTTPie's ``-a``/``--auth``: the password; a
  random-looking user with an empty password (``-u API_KEY:``) is the key itself;
* ``-pPASSWORD`` glued to the flag, for mysql-like clients (``mysql``, ``mysqldump``,
  ``mariadb``, ``mysqladmin`` ...);
* ``-p PASSWORD`` or ``-pPASSWORD`` for ``sshpass`` and registry logins (``docker login``,
  ``podman``/``buildah``/``nerdctl``/``helm registry``/``oras``/``skopeo`` ``login``);
* ``-a PASSWORD`` for ``redis-cli``.

``--password VALUE``, ``--password=VALUE``, ``PGPASSWORD=``, ``MYSQL_PWD=`` and ``SSHPASS=``
are password keywords (:mod:`.keyed`); git credential URLs are URL credentials
(:mod:`.urls`). Forms that only prompt or read the password from elsewhere are not
findings: ``mysql -p`` alone or ``mysql -p dbname`` (with a space the next token is the
database), ``curl -u user``, ``sshpass -f file`` / ``-e``, ``docker login
--password-stdin``; nor are placeholders and templates (``$PASSWORD``, ``${TOKEN}``,
``<token>``, ``****``, ``xxx``), ports (``docker run -p 8080:80``) or ``uid:gid`` pairs.

>>> out = []; _command_lines("curl -u deploy:Tr0ub4dor&ByGiR1 https://x", out); out
[(15, 31, 'cli_password')]
>>> out = []; _command_lines("mysql -u root -p orders", out); out
[]
"""

from __future__ import annotations

import re

from workbench.redaction.normalize import ESCAPED_CHAR
from workbench.redaction.rules.shape import (
    _CODEISH,
    _PLACEHOLDER_PASSWORDS,
    _PLACEHOLDER_WORDS,
    _TRAIL_PUNCT,
    Finding,
    _classes,
    _clean_value,
    _env_reference,
    _in_doc_example,
    _weak_placeholder,
    is_wordy,
)

_VALUE = rf"""(?:{ESCAPED_CHAR}|[^\s"'`<>\\])+"""
#: ``-u`` / ``--user`` value: ``user:password``, optionally quoted (also JSON-escaped).
_R_USERPASS = re.compile(
    r"""(?:[ \t]+|=)?(?P<q>\\?["'])?(?P<user>[A-Za-z0-9_][A-Za-z0-9._@%+-]{0,127}):"""
    r"""(?:\\?["'])?(?P<pw>""" + _VALUE + r")?")
#: ``-pVALUE`` glued (``-p'VALUE'``) or, when ``spaced``, ``-p VALUE``.
_R_GLUED = re.compile(r"""(?:\\?["'])?(?P<v>""" + _VALUE + ")")
_R_SPACED = re.compile(r"""(?:[ \t]+|=)(?:\\?["'])?(?P<v>""" + _VALUE + ")")
#: Clients whose ``-p`` takes a password glued to it (a space makes it prompt).
_MYSQL_LIKE = frozenset({"mysql", "mysqldump", "mariadb", "mariadb-dump", "mysqladmin",
                         "mysqlimport", "mysqlcheck", "mysqlshow", "mysqlpump", "mysqlsh",
                         "mariadb-admin", "mariadb-import", "mariadb-check"})
#: Tools whose ``-p`` takes a password glued or after a space (registries: with ``login``).
_P_SPACED = frozenset({"sshpass"})
_REGISTRY_CLIENTS = frozenset({"docker", "podman", "buildah", "nerdctl", "helm", "oras",
                               "skopeo", "crane", "regctl"})
#: A command word (``mysql``, ``/usr/bin/sshpass``), also as an element of an argument list
#: (``['mysql', '-u', ...]``, JSON-escaped quotes included).
_R_COMMAND_WORD = re.compile(
    r"(?:^|(?<=[\s'\"(;|&=`\[]))(?:[\w.~/-]*/)?([a-z][a-z0-9-]*)(?=[\s'\",\]\\])")
_SEGMENT_BREAKS = ("\n", "\\n", "|", ";", "&&", "`", "$(")




def cli_password_ok(v: str, user: str = "") -> bool:
    """Could ``v``, given to a password flag, be a password? Not a template, placeholder,
    code, port, ``uid:gid`` / ``user:group`` pair (digits only, the user again, a lowercase
    word), path or URL."""
    if len(v) < 6 or len(v) > 200 or v == user or v.isdigit():
        return False
    low = v.lower()
    if (_env_reference(v) or "://" in v or v[0] in "/." or v.startswith("~/")
            or any(c in v for c in "()[]{}") or low in _PLACEHOLDER_PASSWORDS
            or any(w in low for w in _PLACEHOLDER_WORDS) or _weak_placeholder(v)
            or _CODEISH.match(v)):
        return False
    if (v.isalpha() and v.islower()) or (is_wordy(v) and not any(c.isdigit() for c in v)
                                          and all(c.isalnum() or c in "-_." for c in v)):
        return False  # a group or database name, a word
    return _classes(v) >= 2


def _key_as_user(user: str) -> bool:
    """``-u KEY:`` (an API key as the user, empty password): a random-looking key."""
    return (len(user) >= 16 and _classes(user) >= 2 and not is_wordy(user)
            and cli_password_ok(user))


def _segment_words(view: str, pos: int) -> list[str]:
    """The command words before ``pos`` in its shell command (back to a line break, pipe,
    ``;``, ``&&`` or backtick)."""
    start = max(0, pos - 300)
    for brk in _SEGMENT_BREAKS:
        p = view.rfind(brk, start, pos)
        if p != -1:
            start = max(start, p + len(brk))
    return _R_COMMAND_WORD.findall(view[start:pos])


def _flag_at(view: str, pos: int) -> bool:
    """A flag starts at ``pos``: after a space, quote, ``=`` or ``(`` (not inside a word)."""
    return pos == 0 or view[pos - 1] in " \t'\"(=,[" or view.startswith("\\\"", pos - 2)


def _add(view: str, vs: int, ve: int, out: list[Finding], user: str = "") -> None:
    vs, ve = _clean_value(view, vs, ve)
    if ve > vs and cli_password_ok(view[vs:ve], user) and not _in_doc_example(view, vs, ve):
        out.append((vs, ve, "cli_password"))


#: Commands whose ``-a``/``--auth`` takes ``user:password`` (HTTPie); ``-u``, ``-U``,
#: ``--user`` and ``--proxy-user`` take it for any command.
_HTTPIE = frozenset({"http", "https", "httpie"})
#: Every flag this module reads, found in one pass (a literal ``-`` first: SRE scans fast).
_R_FLAG = re.compile(r"-(?:-(?:proxy-)?user|-auth|[uUap])")


def _user_flag(view: str, pos: int, flag: str, out: list[Finding]) -> None:
    """``-u user:PASSWORD`` and its long forms (``-a``/``--auth`` for HTTPie)."""
    fe = pos + len(flag)
    if not (len(flag) == 2 or fe == len(view) or view[fe] in " \t='\"\\"):
        return
    m = _R_USERPASS.match(view, fe)
    # (the command words are looked up only for a user:password value)
    if m is None or (flag in ("-a", "--auth") and not _HTTPIE.intersection(_segment_words(view, pos))):
        return
    user = m.group("user")
    if m.group("pw"):
        _add(view, m.start("pw"), m.end("pw"), out, user)
    elif _key_as_user(user) and not _in_doc_example(view, m.start("user"), m.end("user")):
        out.append((m.start("user"), m.end("user"), "cli_password"))


def _password_flag(view: str, pos: int, flag: str, out: list[Finding]) -> None:
    """``-pPASSWORD`` (mysql-like), ``-p PASSWORD`` (sshpass, registry logins), ``-a``
    (redis-cli)."""
    fe = pos + 2
    if fe >= len(view) or view[fe] == "-":
        return
    spaced = view[fe] in " \t="
    m = (_R_SPACED if spaced else _R_GLUED).match(view, fe)
    if m is None or not cli_password_ok(m.group("v").rstrip(_TRAIL_PUNCT)):
        return
    words = _segment_words(view, pos)  # (only for a password-like value)
    if flag == "-a":
        ok_glued = ok_spaced = "redis-cli" in words
    else:
        ok_spaced = (any(w in _P_SPACED for w in words)
                     or ("login" in words and any(w in _REGISTRY_CLIENTS for w in words)))
        ok_glued = ok_spaced or any(w in _MYSQL_LIKE for w in words)
    if ok_spaced if spaced else ok_glued:
        _add(view, m.start("v"), m.end("v"), out)


def _command_lines(view: str, out: list[Finding]) -> None:
    if "-" not in view:
        return
    for m in _R_FLAG.finditer(view):
        pos, flag = m.start(), m.group()
        if not _flag_at(view, pos):
            continue
        if flag not in ("-p",):
            _user_flag(view, pos, flag, out)
        if flag in ("-p", "-a"):
            _password_flag(view, pos, flag, out)


def cli_flag_in(text: str) -> bool:
    """Does ``text`` hold a password flag (``-u``, ``-p``, ``-a``, ``--user``)? It anchors a
    command-line password on the left of a line or message break."""
    return any(_flag_at(text, m.start()) for m in _R_FLAG.finditer(text))
