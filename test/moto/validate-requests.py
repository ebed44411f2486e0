"""Checks requests against the AWS API model botocore ships (the model moto parses requests with).

moto reads a request through the operation's model but accepts what the model forbids (a missing
required member, a value outside an enum, an unknown member is dropped), so the conformance tier
(test/moto/conformance.test.ts) also runs every request nodefleet sent through this check.

Input (stdin): one JSON object per line, {"service": "ec2", "operation": "CreateFleet", "input": {...}}.
Output (stdout): one line per problem, "<operation>: <problem>"; nothing when every request is valid.
Checks: botocore's ParamValidator (required members, unknown members, types, minimum lengths and
values) and what it leaves out: enums, maximum lengths and values, and string patterns.
"""

import json
import re
import sys

import botocore.session
from botocore.validate import ParamValidator


def model_problems(shape, value, path):
    """Enum, max and pattern constraints of the model that ParamValidator does not check."""
    if value is None:
        return
    kind = shape.type_name
    meta = shape.metadata
    if kind == "structure" and isinstance(value, dict):
        for name, member in shape.members.items():
            if name in value:
                yield from model_problems(member, value[name], f"{path}.{name}" if path else name)
    elif kind == "list" and isinstance(value, list):
        if "max" in meta and len(value) > meta["max"]:
            yield f"{path}: {len(value)} items, at most {meta['max']}"
        for i, item in enumerate(value):
            yield from model_problems(shape.member, item, f"{path}[{i}]")
    elif kind == "map" and isinstance(value, dict):
        for k, v in value.items():
            yield from model_problems(shape.value, v, f"{path}.{k}")
    elif kind == "string" and isinstance(value, str):
        if shape.enum and value not in shape.enum:
            yield f"{path}: {value!r} is not one of {shape.enum}"
        if "max" in meta and len(value) > meta["max"]:
            yield f"{path}: {len(value)} characters, at most {meta['max']}"
        if "pattern" in meta:
            try:
                pattern = re.compile(meta["pattern"])
            except re.error:
                pattern = None
            if pattern and not pattern.fullmatch(value):
                yield f"{path}: {value!r} does not match {meta['pattern']!r}"
    elif kind in ("integer", "long") and isinstance(value, int) and "max" in meta and value > meta["max"]:
        yield f"{path}: {value}, at most {meta['max']}"


def main():
    session = botocore.session.get_session()
    models = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        service, operation, params = req["service"], req["operation"], req["input"]
        model = models.setdefault(service, session.get_service_model(service))
        shape = model.operation_model(operation).input_shape
        if shape is None:
            continue
        report = ParamValidator().validate(params, shape)
        if report.has_errors():
            for problem in report.generate_report().splitlines():
                print(f"{operation}: {problem}")
        for problem in model_problems(shape, params, ""):
            print(f"{operation}: {problem}")


if __name__ == "__main__":
    main()
