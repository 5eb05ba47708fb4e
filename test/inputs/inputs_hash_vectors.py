#!/usr/bin/env python3
"""Generates contract/vectors/inputs-hash.json: the inputs-hash test vectors.

This is a second, independent implementation of contract/sections/inputs.md (Python's json
module with Decimal numbers, its own number formatting, json.dumps for strings, Python's code
point sort). The expected values come from here, and test/inputs/vectors.test.ts checks the
TypeScript implementation against them, so the two must agree.

    python3 test/inputs/inputs_hash_vectors.py           # check the file is up to date
    python3 test/inputs/inputs_hash_vectors.py --write   # regenerate it after editing VECTORS
"""
import base64
import hashlib
import json
import re
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "contract" / "vectors" / "inputs-hash.json"

TFVARS = "terraform.tfvars.json"
SENSITIVE = "sensitive.tfvars.json"
NAME = re.compile(r"[-._a-zA-Z0-9]{1,253}")
MAX_DECIMAL_EXPONENT = 1000


class Invalid(Exception):
    pass


# --- the definition, independently -------------------------------------------------------------


def canonical_number(number: Decimal) -> str:
    sign, digit_tuple, exponent = number.as_tuple()
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    if not digits:
        return "-0" if sign else "0"  # terraform keeps the sign; the variables files refuse it
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits = stripped
    n = exponent + len(digits)  # value = 0.<digits> * 10**n
    if abs(n - 1) > MAX_DECIMAL_EXPONENT:
        raise Invalid("absurd exponent")
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * -n + digits
    else:
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        body = mantissa + "e" + ("-" if n - 1 < 0 else "+") + str(abs(n - 1))
    return ("-" if sign else "") + body


def canonical(value) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, Decimal):
        return canonical_number(value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise Invalid("lone surrogate")
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(canonical(k) + ":" + canonical(value[k]) for k in sorted(value)) + "}"
    raise TypeError(type(value))


def number(text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation:  # an exponent beyond Decimal's range: fine for a zero, absurd otherwise
        mantissa = re.split("[eE]", text)[0]
        if mantissa.strip("-0."):
            raise Invalid("absurd exponent")
        return Decimal(mantissa)


def parse_tfvars(data: bytes) -> dict:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Invalid("not UTF-8")

    def unique(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise Invalid("duplicate key")
        return dict(pairs)

    def no_constant(name):
        raise Invalid(name)

    try:
        value = json.loads(text, parse_float=number, parse_int=number, parse_constant=no_constant, object_pairs_hook=unique)
    except json.JSONDecodeError as error:
        raise Invalid(str(error))
    canonical(value)  # refuses lone surrogates and absurd exponents anywhere
    refuse_negative_zero(value)
    if not isinstance(value, dict):
        raise Invalid("not an object")
    return value


def refuse_negative_zero(value) -> None:
    if isinstance(value, Decimal) and value.is_zero() and value.is_signed():
        raise Invalid("negative zero")
    for member in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        refuse_negative_zero(member)


def hashes(kind: str, image: str, files: dict) -> dict:
    inputs = {}
    for name, data in files.items():
        if name.startswith("captf.") or name.startswith("captf-"):
            continue
        if not NAME.fullmatch(name) or name.startswith(".."):
            raise Invalid("bad name")
        inputs[name] = data
    variables = parse_tfvars(inputs.pop(TFVARS)) if TFVARS in inputs else {}
    sensitive = parse_tfvars(inputs.pop(SENSITIVE)) if SENSITIVE in inputs else {}
    if set(variables) & set(sensitive):
        raise Invalid("variable in both files")
    variables.update(sensitive)

    def document(variables):
        file_hashes = {name: hashlib.sha256(data).hexdigest() for name, data in inputs.items()}
        return canonical({"files": file_hashes, "image": image, "variables": variables, "version": Decimal(1)})

    text = document(variables)
    inputs_hash = hashlib.sha256(text.encode("utf-8")).hexdigest()
    approval_hash = inputs_hash
    if kind == "pool" and "bootstrap_data" in variables:
        without = {k: v for k, v in variables.items() if k != "bootstrap_data"}
        approval_hash = hashlib.sha256(document(without).encode("utf-8")).hexdigest()
    return {"inputsHash": inputs_hash, "approvalHash": approval_hash, "canonical": text}


# --- the vectors -------------------------------------------------------------------------------

IMAGE = "registry.example.com/captf/aws-cluster:v1.4.2"
POOL_IMAGE = "registry.example.com/captf/aws-pool:v1.4.2"
BASIC = '{"region": "eu-west-1", "node_count": 3, "enabled": true, "tags": {"team": "platform", "env": "prod"}, "ssh_key": null}\n'
POOL = '{"replicas": 3, "machine_type": "m5.large", "bootstrap_data": "#cloud-config\\nruncmd: [kubeadm join --token abc.123]\\n"}'
POOL_ROTATED = '{"replicas": 3, "machine_type": "m5.large", "bootstrap_data": "#cloud-config\\nruncmd: [kubeadm join --token def.456]\\n"}'
PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUB1\n-----END CERTIFICATE-----\n"


def b64(data: bytes) -> dict:
    return {"base64": base64.b64encode(data).decode("ascii")}


VECTORS = [
    dict(name="empty-inputs", kind="cluster", image=IMAGE, files={},
         description="An empty inputs dir: no variables, no files."),
    dict(name="empty-tfvars-object", kind="cluster", image=IMAGE, files={TFVARS: "{}"},
         description="terraform.tfvars.json holding {} hashes like no file at all.",
         same_inputs_hash_as="empty-inputs"),
    dict(name="cluster-basic", kind="cluster", image=IMAGE, files={TFVARS: BASIC},
         description="Strings, a number, a boolean, null and a map."),
    dict(name="key-order-and-whitespace", kind="cluster", image=IMAGE,
         files={TFVARS: '\r\n{\t"tags" :{"env":"prod","team":"platform"},\r\n  "ssh_key":null,"enabled":true,\n\n"node_count":3 , "region":"eu-west-1"}  \n'},
         description="cluster-basic with other key order, whitespace and CRLF line ends: the same hash.",
         same_inputs_hash_as="cluster-basic"),
    dict(name="different-image", kind="cluster",
         image="registry.example.com/captf/aws-cluster@sha256:" + "0123456789abcdef" * 4, files={TFVARS: BASIC},
         description="cluster-basic with the image pinned by digest: another hash (the reference is hashed as written)."),
    dict(name="numbers-equivalent-spellings", kind="cluster", image=IMAGE,
         files={TFVARS: '{"one_a": 1, "one_b": 1.0, "one_c": 1e0, "one_d": 10e-1, "one_e": 0.1E+1, "one_f": 100e-2,'
                        ' "zero_a": 0, "zero_b": 0.0, "zero_c": 0.0e10, "zero_d": 0E-5,'
                        ' "neg": -1.500e3, "small": 15E-8, "half": 0.50, "big": 1.0e21, "int": 1234.5e1}'},
         description="Spellings of the same numbers: each becomes one canonical text (a negative zero is refused: see invalid)."),
    dict(name="numbers-canonical-spelling", kind="cluster", image=IMAGE,
         files={TFVARS: '{"one_a": 1, "one_b": 1, "one_c": 1, "one_d": 1, "one_e": 1, "one_f": 1,'
                        ' "zero_a": 0, "zero_b": 0, "zero_c": 0, "zero_d": 0,'
                        ' "neg": -1500, "small": 1.5e-7, "half": 0.5, "big": 1e+21, "int": 12345}'},
         description="numbers-equivalent-spellings written canonically: the same hash.",
         same_inputs_hash_as="numbers-equivalent-spellings"),
    dict(name="numbers-zero-and-tiny", kind="cluster", image=IMAGE,
         files={TFVARS: '{"zeros": [0, 0.0, 0e5, 0.000E-3, 0E+0], "tiny": [-1e-1000, 1e-1000, -0.0001, -1.0e-7],'
                        ' "nested": {"a": [0.00, {"b": 0e-0}]}}'},
         description="Every unsigned spelling of zero is 0; a negative number next to zero keeps its sign."),
    dict(name="numbers-big-and-precise", kind="cluster", image=IMAGE,
         files={TFVARS: '{"big_int": 12345678901234567890, "bigger": 123456789012345678901234567890,'
                        ' "max_safe_plus_2": -9007199254740993, "precise": 0.1000000000000000000001,'
                        ' "pi": 3.14159265358979323846264338327950288, "e20": 100000000000000000000, "e21": 1e21,'
                        ' "micro": 0.000001, "below_micro": 0.0000001, "largest": 1e1000, "smallest": -1.5e-1000}'},
         description="Digits a double would lose are kept; notation switches at 1e21 and 1e-7; 1e±1000 is the limit."),
    dict(name="unicode", kind="cluster", image=IMAGE,
         files={TFVARS: '{"greeting": "привет", "日本語キー": "値", "emoji": "😀 is U+1F600", "escaped": "\\u00e9\\ud83d\\ude00",'
                        ' "literal": "é😀", "\\u00e9": "key é in NFC", "e\\u0301": "key é in NFD",'
                        ' "\uff61": "U+FF61 sorts before U+1F600 (UTF-16 order would not)", "\U0001F600": "astral key",'
                        ' "controls": "tab\\tnul\\u0000us\\u001fdel\u007fls\u2028end", "quotes": "\\"\\\\\\/ \\b\\f\\n\\r"}'},
         description="Unicode keys and values: escapes decode to the same text as literal UTF-8; NFC and NFD stay different keys; keys sort by code point; C0 controls, quote and backslash are escaped, DEL and U+2028 are not."),
    dict(name="unicode-nfc", kind="cluster", image=IMAGE, files={TFVARS: '{"name": "caf\u00e9"}'},
         description="A value in NFC."),
    dict(name="unicode-nfd", kind="cluster", image=IMAGE, files={TFVARS: '{"name": "cafe\u0301"}'},
         description="The same value in NFD: another hash (no Unicode normalization)."),
    dict(name="nested", kind="cluster", image=IMAGE,
         files={TFVARS: '{"network": {"subnets": [{"zones": ["a", "b"], "cidr": "10.0.0.0/24"}, {"cidr": "10.0.1.0/24", "zones": []}], "empty": {}},'
                        ' "matrix": [[1, 2], [3, [4, [5.0, null]]]], "flags": [true, false, null], "nothing": []}'},
         description="Nested objects and arrays: array order is kept, object keys are sorted at every level."),
    dict(name="extra-files", kind="cluster", image=IMAGE,
         files={TFVARS: '{"region": "eu-west-1"}', "user-data.yaml": "#cloud-config\npackages: [jq]\n",
                "ca.crt": PEM, "blob.bin": b64(bytes(range(256))), "empty.txt": "", ".hidden": "a dot file is an input",
                "settings.tfvars.json": '{"not": "variables"}'},
         description="Every other file is an input, hashed by its bytes (a .json other than the two tfvars files too); the module reads them at ${path.root}/captf-inputs/<name>."),
    dict(name="reserved-names-ignored", kind="cluster", image=IMAGE,
         files={TFVARS: BASIC, "captf.io-applied-cluster-outputs": '{"endpoint": "x"}', "captf-pending-cluster-outputs": "{}",
                "captf.image": "registry.example.com/other:v9"},
         description="Names starting with captf. or captf- are the controller's records: not inputs, not hashed.",
         same_inputs_hash_as="cluster-basic"),
    dict(name="kubernetes-secret-mount", kind="cluster", image=IMAGE,
         files={TFVARS: '{"region": "eu-west-1"}', "user-data": "#cloud-config\n", "captf.io-record": "ignored"},
         description="The logical files of a Secret volume mount: its keys. The mount's own entries (..data -> ..2026_11_30_10_00_00.123456789/, each key a symlink key -> ..data/key) are not inputs. The tests write every vector both as plain files and in this layout."),
    dict(name="pool-bootstrap", kind="pool", image=POOL_IMAGE, files={TFVARS: POOL},
         description="A pool: the approval hash leaves out bootstrap_data."),
    dict(name="pool-bootstrap-rotated", kind="pool", image=POOL_IMAGE, files={TFVARS: POOL_ROTATED},
         description="pool-bootstrap after a bootstrap rotation: a new inputs hash, the same approval hash.",
         same_approval_hash_as="pool-bootstrap"),
    dict(name="pool-without-bootstrap", kind="pool", image=POOL_IMAGE,
         files={TFVARS: '{"replicas": 3, "machine_type": "m5.large"}'},
         description="A pool without bootstrap_data: approval hash = inputs hash = pool-bootstrap's approval hash.",
         same_approval_hash_as="pool-bootstrap"),
    dict(name="pool-bootstrap-sensitive", kind="pool", image=POOL_IMAGE,
         files={TFVARS: '{"replicas": 3, "machine_type": "m5.large"}',
                SENSITIVE: '{"bootstrap_data": "#cloud-config\\nruncmd: [kubeadm join --token abc.123]\\n"}'},
         description="bootstrap_data from sensitive.tfvars.json: the merge hashes like pool-bootstrap.",
         same_inputs_hash_as="pool-bootstrap", same_approval_hash_as="pool-bootstrap"),
    dict(name="cluster-with-bootstrap-data", kind="cluster", image=POOL_IMAGE, files={TFVARS: POOL},
         description="pool-bootstrap's inputs on a cluster: only a pool leaves bootstrap_data out, so approval hash = inputs hash.",
         same_inputs_hash_as="pool-bootstrap"),
    dict(name="machine", kind="machine", image="registry.example.com/captf/aws-machine:v1.4.2",
         files={TFVARS: '{"instance_type": "m5.large", "bootstrap_data": "#cloud-config\\n"}', "user-data": "#!/bin/sh\n"},
         description="A machine: approval hash = inputs hash."),
    dict(name="sensitive-merge", kind="cluster", image=IMAGE,
         files={TFVARS: '{"region": "eu-west-1"}', SENSITIVE: '{"db_password": "s3cr3t", "api": {"token": "t0k3n", "port": 443}}'},
         description="sensitive.tfvars.json is merged into the variables (its values are masked; the hash is as if one file held both)."),
    dict(name="sensitive-inline", kind="cluster", image=IMAGE,
         files={TFVARS: '{"api": {"port": 443, "token": "t0k3n"}, "db_password": "s3cr3t", "region": "eu-west-1"}'},
         description="sensitive-merge's variables in one file: the same hash.",
         same_inputs_hash_as="sensitive-merge"),
]

INVALID = [
    dict(name="tfvars-not-json", files={TFVARS: 'region = "eu-west-1"\n'}, description="HCL is not JSON."),
    dict(name="tfvars-top-level-array", files={TFVARS: '[{"region": "eu-west-1"}]'}, description="The top must be an object."),
    dict(name="tfvars-duplicate-key", files={TFVARS: '{"region": "a",\n "region": "b"}'}, description="Duplicate keys are refused."),
    dict(name="tfvars-duplicate-key-escaped", files={TFVARS: '{"x": {"a": 1, "\\u0061": 2}}'}, description="Keys are compared after unescaping."),
    dict(name="tfvars-lone-surrogate", files={TFVARS: '{"a": "\\ud800"}'}, description="An escaped lone surrogate is not Unicode text."),
    dict(name="tfvars-invalid-utf8", files={TFVARS: b64(b'{"a": "\xff"}')}, description="The bytes must be UTF-8."),
    dict(name="tfvars-byte-order-mark", files={TFVARS: b64(b'\xef\xbb\xbf{}')}, description="A UTF-8 byte order mark is refused."),
    dict(name="tfvars-absurd-exponent", files={TFVARS: '{"a": 1e1001}'}, description="Beyond 1e+1000."),
    dict(name="tfvars-absurd-negative-exponent", files={TFVARS: '{"a": 0.01e-999}'}, description="Beyond 1e-1000."),
    dict(name="tfvars-negative-zero", files={TFVARS: '{"gen": -0}'},
         description="A negative zero is refused: terraform keeps its sign (\"cp-${var.gen}\" renders cp--0), so it is not 0."),
    dict(name="tfvars-negative-zero-fraction", files={TFVARS: '{"gen": -0.0}'}, description="-0.0 is a negative zero."),
    dict(name="tfvars-negative-zero-exponent", files={TFVARS: '{"gen": -0e5}'}, description="-0e5 is a negative zero."),
    dict(name="tfvars-negative-zero-fraction-exponent", files={TFVARS: '{"gen": -0.000E-3}'}, description="-0.000E-3 is a negative zero."),
    dict(name="tfvars-negative-zero-huge-exponent", files={TFVARS: '{"gen": -0e99999999999999999999}'},
         description="A zero has no exponent limit, and a negative one is refused all the same."),
    dict(name="tfvars-negative-zero-nested", files={TFVARS: '{"nodes": [{"gen": 1}, {"gen": 2}, {"gen": -0.0}]}'},
         description="A negative zero is refused at any depth, in objects and arrays."),
    dict(name="sensitive-negative-zero", files={TFVARS: '{"region": "eu-west-1"}', SENSITIVE: '{"api": {"token": "t0k3n", "port": [443, -0]}}'},
         description="sensitive.tfvars.json refuses a negative zero too."),
    dict(name="tfvars-nan", files={TFVARS: '{"a": NaN}'}, description="NaN and Infinity are not JSON."),
    dict(name="tfvars-leading-zero", files={TFVARS: '{"a": 01}'}, description="JSON numbers have no leading zeros."),
    dict(name="tfvars-trailing-comma", files={TFVARS: '{"a": 1,}'}, description="JSON has no trailing commas."),
    dict(name="tfvars-raw-control-character", files={TFVARS: '{"a": "x\ty"}'}, description="Control characters in strings must be escaped."),
    dict(name="tfvars-empty-file", files={TFVARS: ""}, description="An empty file is not JSON (write {})."),
    dict(name="tfvars-trailing-data", files={TFVARS: '{} {}'}, description="One JSON value per file."),
    dict(name="sensitive-not-object", files={TFVARS: "{}", SENSITIVE: '"s3cr3t"'}, description="sensitive.tfvars.json must be an object too."),
    dict(name="variable-in-both-files", files={TFVARS: '{"password": "a"}', SENSITIVE: '{"password": "b"}'}, description="A variable is set in one file only."),
    dict(name="invalid-file-name", files={"user data.yaml": "x"}, description="Names follow the Secret/ConfigMap key grammar."),
]


def file_bytes(content) -> bytes:
    return base64.b64decode(content["base64"]) if isinstance(content, dict) else content.encode("utf-8")


def build() -> dict:
    vectors, by_name = [], {}
    for spec in VECTORS:
        files = {name: file_bytes(content) for name, content in spec["files"].items()}
        expected = hashes(spec["kind"], spec["image"], files)
        by_name[spec["name"]] = expected
        for field, key in (("same_inputs_hash_as", "inputsHash"), ("same_approval_hash_as", "approvalHash")):
            if field in spec:
                assert expected[key] == by_name[spec[field]][key], f"{spec['name']}: {key} differs from {spec[field]}"
        vectors.append({k: spec[k] for k in ("name", "description", "kind", "image", "files")} | {"expected": expected})
    assert canonical_number(Decimal("-0.000e-3")) == "-0" and canonical_number(Decimal("0e5")) == "0"
    for name in ("unicode-nfc", "unicode-nfd"):
        assert by_name["unicode-nfc"]["inputsHash"] != by_name["unicode-nfd"]["inputsHash"], name
    assert by_name["different-image"]["inputsHash"] != by_name["cluster-basic"]["inputsHash"]
    assert by_name["pool-bootstrap"]["approvalHash"] != by_name["pool-bootstrap"]["inputsHash"]
    assert by_name["pool-bootstrap-rotated"]["inputsHash"] != by_name["pool-bootstrap"]["inputsHash"]
    assert by_name["pool-without-bootstrap"]["approvalHash"] == by_name["pool-without-bootstrap"]["inputsHash"]

    invalid = []
    for spec in INVALID:
        files = {name: file_bytes(content) for name, content in spec["files"].items()}
        try:
            hashes("cluster", IMAGE, files)
        except Invalid:
            invalid.append({k: spec[k] for k in ("name", "description", "files")} | {"expected": {"reason": "InputsInvalid"}})
            continue
        raise AssertionError(f"{spec['name']} was accepted")

    return {
        "description": "Inputs-hash test vectors (contract/sections/inputs.md). Each file is UTF-8 text or {\"base64\": …}. "
        "`vectors`: inputs dirs (as their logical files) with their canonical document, inputs hash and approval hash. "
        "`invalid`: inputs dirs that must be refused (usage error InputsInvalid), whatever the kind and image. "
        "Generated by test/inputs/inputs_hash_vectors.py; do not edit by hand.",
        "version": 1,
        "vectors": vectors,
        "invalid": invalid,
    }


def main() -> None:
    text = json.dumps(build(), ensure_ascii=False, indent=2) + "\n"
    if "--write" in sys.argv[1:]:
        OUT.write_text(text, encoding="utf-8")
        print(f"wrote {OUT}")
    elif OUT.read_text(encoding="utf-8") != text:
        sys.exit(f"{OUT} is out of date: run {sys.argv[0]} --write")
    else:
        print(f"{OUT} is up to date")


if __name__ == "__main__":
    main()
