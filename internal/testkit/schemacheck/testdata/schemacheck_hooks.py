"""Schemathesis hooks for codeport's schema check (internal/testkit/schemacheck).

The Go test loads this module through SCHEMATHESIS_HOOKS and passes the
live server's address and bearer token in the environment. The hooks make
schemathesis behave like a well-behaved client where a fuzzer would
otherwise only ever see one kind of answer; they never change what a check
accepts, except for the false positives filter_failure drops (each explained
there and logged).
"""

import os
import re
from urllib.parse import quote

import requests
import schemathesis

BASE = os.environ["CODEPORT_SCHEMACHECK_URL"].rstrip("/")
AUTH = {"Authorization": "Bearer " + os.environ["CODEPORT_SCHEMACHECK_TOKEN"]}
# How many of the sessions schemathesis created are kept alive (the newest);
# the server's session cap is one more.
KEEP = int(os.environ["CODEPORT_SCHEMACHECK_KEEP_SESSIONS"])
# Every session id a 201 handed out, one a line, so that the Go test can
# destroy whatever is left and check that none is still alive.
SESSION_LOG = os.environ["CODEPORT_SCHEMACHECK_SESSION_LOG"]
# Every failure filter_failure drops, one a line, for the Go test to show.
DROPPED_LOG = os.environ["CODEPORT_SCHEMACHECK_DROPPED_LOG"]

# A file the hooks put into a session, so that GET .../files can answer 200
# and GET .../files/list can be asked to list a file. At the top of the
# workspace: schemathesis reuses paths it saw in listings, and a directory
# of the hooks' making would have it download a directory.
FIXTURE_PATH = "schemacheck-fixture.txt"
FIXTURE_BODY = b"a file the schema check uploaded\n"

_live = []  # sessions created by POST /sessions, oldest first
_released = set()  # sessions a snapshot with release=true destroyed
_with_fixture = set()  # sessions holding FIXTURE_PATH
_fixture_calls = {}  # per operation, positive cases seen


def _session_url(session_id):
    return f"{BASE}/sessions/{quote(session_id, safe='')}"


@schemathesis.hook
def after_call(context, case, response):
    """Keep at most KEEP of the sessions schemathesis created alive.

    schemathesis creates sessions and never releases them, so with a small
    session cap the server would soon answer every create with 503
    at_capacity, which not_a_server_error reports and which hides every
    other answer of POST /sessions. Releasing the oldest is what a gateway
    does; the newest stay for the stateful phase to use.
    """
    if (case.method == "POST" and case.path == "/sessions/{session_id}/snapshot"
            and response.status_code == 200 and (case.query or {}).get("release") == "true"):
        # The snapshot moved the session out: it is gone, as documented.
        released = case.path_parameters["session_id"]
        _released.add(released)
        if released in _live:
            _live.remove(released)
        _with_fixture.discard(released)
        return
    if case.method != "POST" or case.path != "/sessions" or response.status_code != 201:
        return
    session_id = response.json()["session_id"]
    with open(SESSION_LOG, "a", encoding="utf-8") as log:
        log.write(session_id + "\n")
    _live.append(session_id)
    while len(_live) > KEEP:
        old = _live.pop(0)
        _with_fixture.discard(old)
        r = requests.delete(_session_url(old), headers=AUTH, timeout=60)
        if r.status_code != 204:
            raise AssertionError(f"releasing session {old}: {r.status_code} {r.text}")


@schemathesis.hook
def before_call(context, case, kwargs):
    """Aim some file operations at a real file."""
    if case.method == "GET" and case.path == "/sessions/{session_id}/files":
        # Without this a download only ever answers 404, and its 200 (the
        # bytes, their media type, Content-Disposition) would go unchecked.
        _use_fixture(case, every=2)
    elif case.method == "GET" and case.path == "/sessions/{session_id}/files/list":
        # Listings of "." and of missing paths come on their own; a listing
        # of a file, which the document answers with 400, does not.
        _use_fixture(case, every=3)


def _use_fixture(case, every):
    """Aim one in `every` schema-valid cases at FIXTURE_PATH in a live session.

    A generated path never names a file in a fresh workspace. Negative
    cases are left alone. schemathesis revalidates a case a hook edited.
    """
    if not _live:
        return
    if case.meta is not None and case.meta.generation.mode != "positive":
        return
    key = (case.method, case.path)
    _fixture_calls[key] = _fixture_calls.get(key, 0) + 1
    if _fixture_calls[key] % every:
        return
    session_id = _live[-1]
    if session_id not in _with_fixture:
        # requests writes data fields before files: the path comes first,
        # and the fixture is streamed.
        r = requests.post(
            _session_url(session_id) + "/files",
            headers=AUTH,
            data={"path": FIXTURE_PATH},
            files={"file": ("fixture.txt", FIXTURE_BODY, "application/octet-stream")},
            timeout=60,
        )
        if r.status_code != 201:
            # The session is gone, or a generated request took the name
            # (as a directory, say): leave the case as it was. The fixture
            # upload is not under test; schemathesis' own uploads are.
            return
        _with_fixture.add(session_id)
    case.path_parameters["session_id"] = session_id
    case.query = {"path": FIXTURE_PATH}


# Characters an HTTP field value cannot hold (RFC 9110, section 5.5): the
# C0 controls but tab, and DEL.
_CTL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")

# The parts of an upload, as schemathesis' mutations point at them.
_PARTS = ("/properties/file", "/properties/path")

_UPLOAD = ("POST", "/sessions/{session_id}/files")
_DOWNLOAD = ("GET", "/sessions/{session_id}/files")
_EXECUTE = ("POST", "/sessions/{session_id}/exec")

# What each editor command needs besides command and path, as execute's
# description and EditorInput's say.
_EDITOR_NEEDS = {
    "create": ("file_text",),
    "str_replace": ("old_str", "new_str"),
    "insert": ("insert_line", "new_str"),
}


def _unrepresentable_part_name(failure, case, response):
    """positive_data_acceptance, upload: a part name no header can carry.

    The multipart schema allows form fields besides path and file, so
    schemathesis sends extra parts with arbitrary names. A part's name
    travels in its Content-Disposition header, and a name with a control
    character makes that header, hence the multipart body, malformed: no
    server can read past it, and codeport rightly answers 422 "malformed
    multipart body". Such a body is not schema-valid data but an encoding
    schemathesis cannot represent.
    """
    if failure.code != "ST202" or response.status_code != 422 or "malformed multipart body" not in response.text:
        return None
    names = case.body.keys() if isinstance(case.body, dict) else ()
    bad = [name for name in names if _CTL.search(str(name))]
    return f"part names {sorted(map(repr, bad))}" if bad else None


def _untyped_multipart_part(failure, case, response):
    """negative_data_rejection, upload: a part "of the wrong type".

    schemathesis makes a negative case by giving the file or path part
    another JSON type (null, a number, an object), but a multipart part has
    no JSON type: it is bytes, and schemathesis sends null as the four
    bytes "null". The server receives a valid file or path and rightly
    accepts it. Negative cases that change the body's structure (no file
    part, an empty path) are still checked.
    """
    if failure.code != "ST201" or case.meta is None:
        return None
    mutations = getattr(case.meta.phase.data, "mutations", None) or ()
    if not mutations or not all(m.keywords == ("type",) and m.schema_pointer in _PARTS for m in mutations):
        return None  # not only type changes of parts: the server must refuse it
    return "; ".join(f"{m.schema_pointer}: {m.original_value} became {m.new_value!r}" for m in mutations)


def _editor_field_missing(failure, case, response):
    """positive_data_acceptance, execute: an editor command short of a field.

    The document says, in execute's description and in EditorInput's, that
    `create` needs `file_text`, `str_replace` needs `old_str` and
    `new_str`, and `insert` needs `insert_line` and `new_str`, and that a
    missing one is a 422. Its schema lists those fields as optional on
    purpose: it describes the shape the handler checks, and the
    per-command rules are the editor's (package server's TestEditorInput
    holds the document to that). So schemathesis sends such an input as
    valid; the contract says it is not, and the server says which field is
    missing. Only a 422 that names a field the input really lacks is
    dropped.
    """
    if failure.code != "ST202" or response.status_code != 422 or not isinstance(case.body, dict):
        return None
    tool_input = case.body.get("input")
    if case.body.get("tool") != "text_editor_code_execution" or not isinstance(tool_input, dict):
        return None
    command = tool_input.get("command")
    missing = [f for f in _EDITOR_NEEDS.get(command, ()) if tool_input.get(f) is None]
    if not any(f"{command} requires {f}" in response.text for f in missing):
        return None
    return f"{command} without {', '.join(missing)}"


def _path_xor_file_id(failure, case, response):
    """positive_data_acceptance, getFile: `path` and `file_id` together, or
    neither.

    The document says, in getFile's description, to give exactly one of
    the two query parameters and that neither or both is a 422; OpenAPI
    has no way to say "exactly one of these parameters", so both are
    listed as optional and schemathesis sends such a query as valid. Only
    a 422 whose detail says so, for a query that really has both or
    neither, is dropped.
    """
    if failure.code != "ST202" or response.status_code != 422:
        return None
    query = case.query or {}
    both = query.get("path") not in (None, "") and query.get("file_id") not in (None, "")
    neither = query.get("path") in (None, "") and query.get("file_id") in (None, "")
    if both and "give query parameter path or file_id, not both" in response.text:
        return "path and file_id"
    if neither and "query parameter path (or file_id) is required" in response.text:
        return "neither path nor file_id"
    return None


# The pattern openapi.yaml gives X-Codeport-Session-Id.
_KEPT_ID = re.compile(r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _kept_id_off_pattern(failure, case, response):
    """positive_data_acceptance, restore: a kept session id off its pattern.

    The document gives the X-Codeport-Session-Id header a pattern, yet the
    coverage phase sends values that do not match it ("0") as valid data;
    the server refuses them with 422 as the description says. Only a 422
    that says the id cannot be kept, for a value that really is off the
    pattern, is dropped.
    """
    if failure.code != "ST202" or response.status_code != 422 or "cannot be kept" not in response.text:
        return None
    value = (case.headers or {}).get("X-Codeport-Session-Id")
    if value is None or _KEPT_ID.match(value):
        return None
    return f"X-Codeport-Session-Id {value!r}"


def _kept_id_of_another_spelling(failure, case, response):
    """positive_data_acceptance, restore: a kept id this node cannot answer to.

    The pattern of X-Codeport-Session-Id admits both spellings of an id,
    "<node>.<uuid>" and "<uuid>", because which one a node keeps depends on
    whether it has a node id, which the document cannot know; its
    description says the other spelling is invalid_request (422). Only that
    422, for a value on the pattern whose spelling is the one this server
    (which has no node id) refuses, is dropped.
    """
    if failure.code != "ST202" or response.status_code != 422 or "this server has no node id" not in response.text:
        return None
    value = (case.headers or {}).get("X-Codeport-Session-Id")
    if value is None or not _KEPT_ID.match(value) or "." not in value:
        return None
    return f"X-Codeport-Session-Id {value!r}"


# The false positives filter_failure drops; each is explained above.
_FALSE_POSITIVES = {
    ("POST", "/snapshots/restore"): [_kept_id_off_pattern, _kept_id_of_another_spelling],
    _UPLOAD: [_unrepresentable_part_name, _untyped_multipart_part],
    _EXECUTE: [_editor_field_missing],
    _DOWNLOAD: [_path_xor_file_id],
}


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Drop the known false positives, each logged for the Go test to show.

    Everything else fails the run.
    """
    session_id = (case.path_parameters or {}).get("session_id")
    if failure.code in ("ST302", "ST303") and response.status_code == 404 and session_id in _released:
        # POST .../snapshot?release=true destroys the session once its
        # snapshot is sent (the document says so); schemathesis does not
        # know that a POST can end a resource, and reports the session's
        # absence afterwards.
        with open(DROPPED_LOG, "a", encoding="utf-8") as log:
            log.write(f"{failure.code} {case.method} {case.formatted_path} [released]: released by a snapshot with release=true\n")
        return False
    for rule in _FALSE_POSITIVES.get((case.method, case.path), ()):
        why = rule(failure, case, response)
        if why is not None:
            with open(DROPPED_LOG, "a", encoding="utf-8") as log:
                log.write(f"{failure.code} {case.method} {case.formatted_path} [{rule.__name__}]: {why}\n")
            return False
    return True
