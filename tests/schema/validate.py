#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks ngauge result files against the published schema.

    validate.py [--strict-integers] [--schema SCHEMA.json] FILE...

The schema is doc/schema/ngauge-result-1.schema.json (JSON Schema 2020-12),
checked by python3-jsonschema.  Every problem is one line naming the file and
the key's path, e.g.

    r.json: results[3].latency_uss: unknown key
    r.json: results[0].latency_us: required key missing
    r.json: env.cores: 'two' is not of type 'integer'

Exit status: 0 every file is valid, 1 one is not (or is not JSON), 2 usage,
77 python3-jsonschema is not installed (Debian: apt-get install
python3-jsonschema).

--strict-integers also requires every key the schema types "integer" to be
written as a JSON integer (64, not 64.0): JSON Schema itself counts 64.0 as
an integer, so the plain check accepts both forms.

Imported (tests/integration/lib.sh, tests/groundtruth/gtlib.py,
tests/plots/plotcheck.py): available(), problems(doc), file_problems(path).
"""
import json
import os
import re
import sys

SKIP = 77
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "doc", "schema",
                      "ngauge-result-1.schema.json")

try:
    import jsonschema
except ImportError:  # pragma: no cover - depends on the host
    jsonschema = None

_validators = {}


def available():
    """True when python3-jsonschema can be imported."""
    return jsonschema is not None


def _validator(strict_integers=False, schema_path=SCHEMA):
    key = (strict_integers, os.path.abspath(schema_path))
    if key not in _validators:
        with open(schema_path, encoding="utf-8") as f:
            schema = json.load(f)
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        if strict_integers:
            checker = cls.TYPE_CHECKER.redefine(
                "integer", lambda _, x: isinstance(x, int) and not isinstance(x, bool))
            cls = jsonschema.validators.extend(cls, type_checker=checker)
        _validators[key] = cls(schema)
    return _validators[key]


NOT_HERE = "key not allowed here"
_NAME = re.compile(r"^[A-Za-z0-9_+-]+$")


def path_text(path):
    """A key's path as text: results[3].latency_us, env.cores, parameters["odd key"]."""
    out = ""
    for p in path:
        if isinstance(p, int):
            out += "[%d]" % p
        elif _NAME.match(p):
            out += ("." if out else "") + p
        else:
            out += "[%s]" % json.dumps(p)
    return out or "(the document)"


def _short(v, n=60):
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= n else s[: n - 3] + "..."


def _known(schema, key):
    if key in schema.get("properties", {}):
        return True
    return any(re.search(p, key) for p in schema.get("patternProperties", {}))


def _lines(err):
    """(path, what) pairs for one validation error, the path naming the key."""
    path = list(err.absolute_path)
    inst = err.instance
    if err.validator == "required" and isinstance(inst, dict):
        for k in err.validator_value:
            if k not in inst and err.message.startswith(repr(k)):
                return [(path + [k], "required key missing")]
        return [(path, err.message)]
    if err.validator == "additionalProperties" and isinstance(inst, dict):
        extra = [k for k in inst if not _known(err.schema, k)]
        if err.validator_value is False and extra:
            return [(path + [k], "unknown key (the format has no such key here)") for k in extra]
        return [(path + [k], "%s: %s" % (_short(inst[k]), err.message)) for k in extra] or [(path, err.message)]
    if "propertyNames" in err.relative_schema_path or "propertyNames" in err.absolute_schema_path:
        if isinstance(inst, str):
            if err.validator == "not":
                return [(path + [inst], "not a key of this file's module or pattern")]
            return [(path + [inst], "unknown name: " + err.message)]
    if err.validator == "not" and err.validator_value == {}:
        why = err.schema.get("description", "") if isinstance(err.schema, dict) else ""
        return [(path, NOT_HERE + (": " + why if why else ""))]
    if err.validator is None or err.schema is False:
        return [(path, NOT_HERE)]
    msg = err.message
    if msg.startswith(repr(inst)):
        msg = _short(inst) + msg[len(repr(inst)):]
    return [(path, msg[:300])]


def problems(doc, strict_integers=False, schema_path=SCHEMA):
    """The problems of one parsed document: a list of "PATH: what" lines."""
    v = _validator(strict_integers, schema_path)
    out = []
    for err in v.iter_errors(doc):
        out.extend(_lines(err))
    # a key that must not be there at all: its own contents are not worth a line each
    banned = [p for p, w in out if w.startswith(NOT_HERE)]
    out = [(p, w) for p, w in out if not any(len(p) > len(b) and p[: len(b)] == b for b in banned)]
    out.sort(key=lambda pw: [(0, p) if isinstance(p, int) else (1, p) for p in pw[0]])
    seen, lines = set(), []
    for p, w in out:
        line = "%s: %s" % (path_text(p), w)
        if line not in seen:
            seen.add(line)
            lines.append(line)
    return lines


def _no_constant(name):
    raise ValueError("%s is not a JSON number" % name)


def _no_duplicates(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError("key %s appears twice in one object" % json.dumps(k))
        d[k] = v
    return d


def load(path):
    """Parses a result file strictly (no NaN/Infinity, no repeated keys)."""
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_constant=_no_constant, object_pairs_hook=_no_duplicates)


def file_problems(path, strict_integers=False, schema_path=SCHEMA):
    """The problems of the file at @path, each "FILE: PATH: what"."""
    try:
        doc = load(path)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return ["%s: not a readable JSON document: %s" % (path, e)]
    return ["%s: %s" % (path, p) for p in problems(doc, strict_integers, schema_path)]


def main(argv):
    args, strict, schema = [], False, SCHEMA
    it = iter(argv)
    for a in it:
        if a == "--strict-integers":
            strict = True
        elif a == "--schema":
            schema = next(it, None)
            if schema is None:
                print("validate.py: --schema needs a file", file=sys.stderr)
                return 2
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        elif a.startswith("-") and a != "-":
            print("validate.py: unknown option %s" % a, file=sys.stderr)
            return 2
        else:
            args.append(a)
    if not args:
        print("usage: validate.py [--strict-integers] [--schema SCHEMA.json] FILE...", file=sys.stderr)
        return 2
    if not available():
        print("SKIP: python3-jsonschema is not installed (Debian package python3-jsonschema)")
        return SKIP
    bad = 0
    for path in args:
        lines = file_problems(path, strict, schema)
        for line in lines:
            print(line)
        bad += bool(lines)
    if bad:
        print("%d of %d file(s) do not match %s" % (bad, len(args), os.path.normpath(schema)), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
