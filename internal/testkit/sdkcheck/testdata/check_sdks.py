"""Cross-check codeport's gateway shapes against the official SDKs.

Run by internal/testkit/sdkcheck's Go test inside a throwaway virtual environment
that has the pinned `openai` and `anthropic` packages. It is a check, not
product code.

    python check_sdks.py FIXTURE_DIR

FIXTURE_DIR holds one JSON file per fixture: {"name", "kind", "value"}.
Each value is parsed with the SDK's own validation into the typed model (or
TypedDict) its kind names, then dumped back, and the round trip must lose
nothing: every field of the fixture present in the dump with an equal value
of the same JSON type, no field the SDK does not declare (the SDK models
accept unknown fields silently, so those are looked for explicitly), and
nothing the SDK added. Every failure names the fixture and the field path.
Exit status 0 when every fixture passes, 1 otherwise.
"""

import json
import os
import sys

import anthropic
import openai
import pydantic
from anthropic.types import (
    BashCodeExecutionToolResultBlock,
    BashCodeExecutionToolResultBlockParam,
    CodeExecutionTool20250825Param,
    CodeExecutionToolResultBlock,
    CodeExecutionToolResultBlockParam,
    Container,
    ContainerUploadBlock,
    ContainerUploadBlockParam,
    ContentBlock,
    MessageParam,
    ServerToolUseBlock,
    ServerToolUseBlockParam,
    TextEditorCodeExecutionToolResultBlock,
    TextEditorCodeExecutionToolResultBlockParam,
    ToolParam,
)
from anthropic.types.beta import (
    BetaBashCodeExecutionToolResultBlock,
    BetaBashCodeExecutionToolResultBlockParam,
    BetaCodeExecutionTool20250825Param,
    BetaContainer,
    BetaContainerUploadBlock,
    BetaContainerUploadBlockParam,
    BetaContentBlock,
    BetaMessageParam,
    BetaServerToolUseBlock,
    BetaServerToolUseBlockParam,
    BetaTextEditorCodeExecutionToolResultBlock,
    BetaTextEditorCodeExecutionToolResultBlockParam,
)
from openai.types.responses import (
    FunctionTool,
    FunctionToolParam,
    ResponseCodeInterpreterCallCodeDeltaEvent,
    ResponseCodeInterpreterCallCodeDoneEvent,
    ResponseCodeInterpreterCallCompletedEvent,
    ResponseCodeInterpreterCallInProgressEvent,
    ResponseCodeInterpreterCallInterpretingEvent,
    ResponseCodeInterpreterToolCall,
    ResponseCodeInterpreterToolCallParam,
    ResponseOutputItem,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseStreamEvent,
)
from openai.types.responses.response_input_item_param import FunctionCallOutput
from openai.types.responses.response_output_text import Annotation as OutputTextAnnotation
from openai.types.responses.response_output_text import AnnotationContainerFileCitation
from openai.types.responses.response_output_text_param import (
    AnnotationContainerFileCitation as AnnotationContainerFileCitationParam,
)

# The concrete event model each Responses streaming event type must parse
# into, both directly and through the SDK's ResponseStreamEvent union.
EVENT_MODELS = {
    "response.output_item.added": ResponseOutputItemAddedEvent,
    "response.output_item.done": ResponseOutputItemDoneEvent,
    "response.code_interpreter_call.in_progress": ResponseCodeInterpreterCallInProgressEvent,
    "response.code_interpreter_call.interpreting": ResponseCodeInterpreterCallInterpretingEvent,
    "response.code_interpreter_call.completed": ResponseCodeInterpreterCallCompletedEvent,
    "response.code_interpreter_call_code.delta": ResponseCodeInterpreterCallCodeDeltaEvent,
    "response.code_interpreter_call_code.done": ResponseCodeInterpreterCallCodeDoneEvent,
}


_ADAPTERS = {}


def adapter(t):
    """One TypeAdapter per type: building one for a large union is slow."""
    a = _ADAPTERS.get(id(t))
    if a is None:
        a = _ADAPTERS[id(t)] = pydantic.TypeAdapter(t)
    return a


def jtype(v):
    """The JSON type of a decoded value (bool is not a number here)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def compare(want, got, path, problems):
    """Records every difference between the fixture and the SDK's dump."""
    if jtype(want) != jtype(got):
        problems.append(f"{path or '<root>'}: fixture has {jtype(want)} {short(want)}, SDK gives {jtype(got)} {short(got)}")
        return
    if isinstance(want, dict):
        for k in want:
            p = f"{path}.{k}" if path else k
            if k not in got:
                problems.append(f"{p}: lost in the round trip (the SDK type does not keep it)")
            else:
                compare(want[k], got[k], p, problems)
        for k in got:
            if k not in want:
                p = f"{path}.{k}" if path else k
                problems.append(f"{p}: added by the SDK ({short(got[k])}), not in the fixture")
    elif isinstance(want, list):
        if len(want) != len(got):
            problems.append(f"{path}: fixture has {len(want)} entries, SDK gives {len(got)}")
        for i, (w, g) in enumerate(zip(want, got)):
            compare(w, g, f"{path}[{i}]", problems)
    elif want != got:
        problems.append(f"{path or '<root>'}: fixture has {short(want)}, SDK gives {short(got)}")


def short(v):
    s = json.dumps(v)
    return s if len(s) <= 80 else s[:77] + "..."


def undeclared(obj, path, problems):
    """Records fields a pydantic model accepted only as extras."""
    if isinstance(obj, pydantic.BaseModel):
        for k in (obj.model_extra or {}):
            p = f"{path}.{k}" if path else k
            problems.append(f"{p}: not a field of {type(obj).__name__} (accepted only as an unknown extra)")
        for name in type(obj).model_fields:
            field = type(obj).model_fields[name]
            key = field.alias or name
            undeclared(getattr(obj, name), f"{path}.{key}" if path else key, problems)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            undeclared(v, f"{path}[{i}]", problems)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            undeclared(v, f"{path}.{k}" if path else k, problems)


def check_model(model, value, expect_class=None):
    """Parses value into a pydantic model (or a union through a TypeAdapter)
    and checks the round trip. Returns the problems found."""
    try:
        if isinstance(model, type) and issubclass(model, pydantic.BaseModel):
            parsed = model.model_validate(value)
            dumped = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
        else:
            ta = adapter(model)
            parsed = ta.validate_python(value)
            dumped = ta.dump_python(parsed, mode="json", by_alias=True, exclude_unset=True)
    except pydantic.ValidationError as e:
        return [f"rejected by {name_of(model)}: " + " | ".join(fmt_error(err) for err in e.errors())]
    problems = []
    if expect_class is not None and type(parsed) is not expect_class:
        problems.append(f"{name_of(model)} parsed it as {type(parsed).__name__}, not {expect_class.__name__}")
    undeclared(parsed, "", problems)
    compare(value, dumped, "", problems)
    return [f"{name_of(model)}: {p}" for p in problems]


def check_typeddict(td, value):
    """Validates value as a request TypedDict of the SDK; unknown keys are
    dropped by the validation and so show up as lost."""
    try:
        ta = adapter(td)
        parsed = ta.validate_python(value, strict=False)
        dumped = ta.dump_python(parsed, mode="json", by_alias=True)
    except pydantic.ValidationError as e:
        return [f"rejected by {name_of(td)}: " + " | ".join(fmt_error(err) for err in e.errors())]
    problems = []
    compare(value, dumped, "", problems)
    return [f"{name_of(td)}: {p}" for p in problems]


def fmt_error(err):
    loc = ".".join(str(x) for x in err.get("loc", ()))
    return f"{loc or '<root>'}: {err.get('msg')} (input {short(err.get('input'))})"


UNION_NAMES = {
    id(ResponseOutputItem): "ResponseOutputItem",
    id(ResponseStreamEvent): "ResponseStreamEvent",
    id(ContentBlock): "ContentBlock",
    id(BetaContentBlock): "BetaContentBlock",
    id(MessageParam): "MessageParam",
    id(BetaMessageParam): "BetaMessageParam",
}


def name_of(t):
    if id(t) in UNION_NAMES:
        return UNION_NAMES[id(t)]
    n = getattr(t, "__name__", None)
    if n:
        return n
    return repr(t).replace("typing.", "")[:60]


def check_event(value):
    typ = value.get("type") if isinstance(value, dict) else None
    model = EVENT_MODELS.get(typ)
    if model is None:
        return [f"type: {short(typ)} is not one of the SDK's code interpreter or output item events ({', '.join(sorted(EVENT_MODELS))})"]
    problems = check_model(model, value)
    problems += check_model(ResponseStreamEvent, value, expect_class=model)
    if typ in ("response.output_item.added", "response.output_item.done"):
        item = value.get("item")
        if not isinstance(item, dict) or item.get("type") != "code_interpreter_call":
            problems.append(f"item.type: {short(item)} is not a code_interpreter_call item")
        else:
            problems += [f"item: {p}" for p in check_model(ResponseCodeInterpreterToolCall, item)]
    return problems


def check_stream(value):
    """A whole event sequence: every event as above, and the ordering
    invariants a client's stream accumulator relies on."""
    if not isinstance(value, list) or not value:
        return ["not a non-empty list of events"]
    problems = []
    for i, ev in enumerate(value):
        problems += [f"[{i}] {p}" for p in check_event(ev)]
    seqs = [ev.get("sequence_number") for ev in value]
    if any(not isinstance(s, int) for s in seqs) or any(b <= a for a, b in zip(seqs, seqs[1:])):
        problems.append(f"sequence_number: not strictly increasing: {seqs}")
    ids = {ev.get("item_id", (ev.get("item") or {}).get("id")) for ev in value}
    if len(ids) != 1:
        problems.append(f"item_id: events name several items: {sorted(map(str, ids))}")
    idx = {ev.get("output_index") for ev in value}
    if len(idx) != 1:
        problems.append(f"output_index: events name several indexes: {sorted(map(str, idx))}")
    return problems


def check_code_interpreter_call(value):
    return (
        check_model(ResponseCodeInterpreterToolCall, value)
        + check_model(ResponseOutputItem, value, expect_class=ResponseCodeInterpreterToolCall)
        # A client sends the item back as input when it continues a
        # conversation; the request side must take it too.
        + check_typeddict(ResponseCodeInterpreterToolCallParam, value)
    )


def check_container_file_citation(value):
    return (
        check_model(AnnotationContainerFileCitation, value)
        + check_model(OutputTextAnnotation, value, expect_class=AnnotationContainerFileCitation)
        + check_typeddict(AnnotationContainerFileCitationParam, value)
    )


def check_function_tool(value):
    return check_model(FunctionTool, value) + check_typeddict(FunctionToolParam, value)


def check_content_block(value, model, param, beta_model, beta_param):
    """A content block of a response, in the Messages API's types and the
    beta ones, directly and through the content block union; and the same
    block sent back in a request."""
    return (
        check_model(model, value)
        + check_model(ContentBlock, value, expect_class=model)
        + check_typeddict(param, value)
        + check_model(beta_model, value)
        + check_model(BetaContentBlock, value, expect_class=beta_model)
        + check_typeddict(beta_param, value)
    )


def check_server_tool_use(value):
    return check_content_block(
        value, ServerToolUseBlock, ServerToolUseBlockParam, BetaServerToolUseBlock, BetaServerToolUseBlockParam
    )


def check_bash_code_execution_result(value):
    return check_content_block(
        value,
        BashCodeExecutionToolResultBlock,
        BashCodeExecutionToolResultBlockParam,
        BetaBashCodeExecutionToolResultBlock,
        BetaBashCodeExecutionToolResultBlockParam,
    )


def check_text_editor_code_execution_result(value):
    return check_content_block(
        value,
        TextEditorCodeExecutionToolResultBlock,
        TextEditorCodeExecutionToolResultBlockParam,
        BetaTextEditorCodeExecutionToolResultBlock,
        BetaTextEditorCodeExecutionToolResultBlockParam,
    )


def check_container_upload_param(value):
    """A container_upload block as a client sends it: the block's request
    type, and inside a user message."""
    problems = check_typeddict(ContainerUploadBlockParam, value) + check_typeddict(BetaContainerUploadBlockParam, value)
    message = {"role": "user", "content": [value, {"type": "text", "text": "Summarise the file."}]}
    for td in (MessageParam, BetaMessageParam):
        problems += [f"in a user message: {p}" for p in check_typeddict(td, message)]
    return problems


def check_container_upload(value):
    """A container_upload block as a response carries it, and the same
    block sent back in a request."""
    return (
        check_model(ContainerUploadBlock, value)
        + check_model(ContentBlock, value, expect_class=ContainerUploadBlock)
        + check_model(BetaContainerUploadBlock, value)
        + check_model(BetaContentBlock, value, expect_class=BetaContainerUploadBlock)
        + check_container_upload_param(value)
    )


def check_container(value):
    """The container field of a Messages response, and its id sent back as
    a request's container param (a string, or an object with the id)."""
    problems = check_model(Container, value) + check_model(BetaContainer, value)
    return problems


def check_code_execution_result(value):
    return (
        check_model(CodeExecutionToolResultBlock, value)
        + check_model(ContentBlock, value, expect_class=CodeExecutionToolResultBlock)
        + check_typeddict(CodeExecutionToolResultBlockParam, value)
    )


CHECKS = {
    "openai.function_tool": check_function_tool,
    "openai.code_interpreter_call": check_code_interpreter_call,
    "openai.stream_event": check_event,
    "openai.stream": check_stream,
    "openai.function_call_output": lambda v: check_typeddict(FunctionCallOutput, v),
    "openai.container_file_citation": check_container_file_citation,
    "anthropic.tool": lambda v: check_typeddict(ToolParam, v),
    "anthropic.server_tool_use": check_server_tool_use,
    "anthropic.code_execution_tool_result": check_code_execution_result,
    "anthropic.code_execution_tool_20250825": lambda v: (
        check_typeddict(CodeExecutionTool20250825Param, v) + check_typeddict(BetaCodeExecutionTool20250825Param, v)
    ),
    "anthropic.bash_code_execution_tool_result": check_bash_code_execution_result,
    "anthropic.text_editor_code_execution_tool_result": check_text_editor_code_execution_result,
    "anthropic.container_upload": check_container_upload,
    "anthropic.container": check_container,
    "anthropic.container_upload_param": check_container_upload_param,
}


def main(argv):
    if len(argv) != 2:
        print("usage: check_sdks.py FIXTURE_DIR", file=sys.stderr)
        return 2
    d = argv[1]
    names = sorted(n for n in os.listdir(d) if n.endswith(".json"))
    print(f"openai {openai.__version__}, anthropic {anthropic.__version__}, pydantic {pydantic.VERSION}")
    failed = 0
    for n in names:
        with open(os.path.join(d, n), encoding="utf-8") as f:
            fx = json.load(f)
        name, kind, value = fx.get("name", n), fx.get("kind"), fx.get("value")
        check = CHECKS.get(kind)
        problems = [f"unknown fixture kind {kind!r}"] if check is None else check(value)
        # Declared divergences: each must occur, and is then not a failure.
        for known in fx.get("known") or []:
            hits = [p for p in problems if p.startswith(known)]
            if not hits:
                problems.append(f"declared divergence did not occur (fixed? update the fixture): {known}")
            for p in hits:
                print(f"known {name} ({kind}): {p}")
                problems.remove(p)
        if problems:
            failed += 1
            for p in problems:
                print(f"FAIL {name} ({kind}): {p}")
        else:
            print(f"ok   {name} ({kind})")
    print(f"checked {len(names)} fixtures, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
