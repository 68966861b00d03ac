from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

BEHAVIOR_BLOCKING: Behavior
BEHAVIOR_NON_BLOCKING: Behavior
BEHAVIOR_UNSPECIFIED: Behavior
CANCELLATION_REASON_PROVIDER_TIMEOUT: CancellationReason
CANCELLATION_REASON_UNSPECIFIED: CancellationReason
CANCELLATION_REASON_WITHDRAWN: CancellationReason
DECISION_CANCEL: Decision
DECISION_COMMIT: Decision
DECISION_PENDING: Decision
DECISION_UNSPECIFIED: Decision
DELIVERY_NOW: Delivery
DELIVERY_UNSPECIFIED: Delivery
DELIVERY_WHEN_IDLE: Delivery
DESCRIPTOR: _descriptor.FileDescriptor
DISPOSITION_DUPLICATE: Disposition
DISPOSITION_EXECUTE: Disposition
DISPOSITION_REJECT: Disposition
DISPOSITION_RUN: Disposition
DISPOSITION_UNSPECIFIED: Disposition
JOB_STATE_DECIDED: JobState
JOB_STATE_DONE: JobState
JOB_STATE_PREPARED: JobState
JOB_STATE_PREPARING: JobState
JOB_STATE_RUNNING: JobState
JOB_STATE_UNSPECIFIED: JobState
NOTE_VIA_FUNCTION_RESPONSE: NoteVia
NOTE_VIA_UNSPECIFIED: NoteVia
NOTE_VIA_USER_TURN: NoteVia
OUTCOME_CANCELLED: Outcome
OUTCOME_COMMITTED: Outcome
OUTCOME_FAILED: Outcome
OUTCOME_RESULT: Outcome
OUTCOME_UNKNOWN: Outcome
OUTCOME_UNSPECIFIED: Outcome
ROLE_MODEL: Role
ROLE_UNSPECIFIED: Role
ROLE_USER: Role
RUN_STATE_CANCELLED: RunState
RUN_STATE_CONFIRMED: RunState
RUN_STATE_EXPIRED: RunState
RUN_STATE_OPENED: RunState
RUN_STATE_REFUSED: RunState
RUN_STATE_UNSPECIFIED: RunState
SCHEDULING_INTERRUPT: Scheduling
SCHEDULING_SILENT: Scheduling
SCHEDULING_UNSPECIFIED: Scheduling
SCHEDULING_WHEN_IDLE: Scheduling
SESSION_STATE_LOST: SessionState
SESSION_STATE_NEW: SessionState
SESSION_STATE_RESUMED: SessionState
SESSION_STATE_UNSPECIFIED: SessionState
SPEECH_EVENT_INTERRUPTED: SpeechEvent
SPEECH_EVENT_MODEL_GENERATION_COMPLETE: SpeechEvent
SPEECH_EVENT_MODEL_OUTPUT_START: SpeechEvent
SPEECH_EVENT_MODEL_TURN_COMPLETE: SpeechEvent
SPEECH_EVENT_UNSPECIFIED: SpeechEvent
SPEECH_EVENT_USER_ACTIVITY_END: SpeechEvent
SPEECH_EVENT_USER_ACTIVITY_START: SpeechEvent
TOOL_CHOICE_AUTO: ToolChoice
TOOL_CHOICE_NONE: ToolChoice
TOOL_CHOICE_UNSPECIFIED: ToolChoice

class CloseSessionRequest(_message.Message):
    __slots__ = ["session_id"]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class CloseSessionResponse(_message.Message):
    __slots__ = ["cancelled_job_ids", "effects"]
    CANCELLED_JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    cancelled_job_ids: _containers.RepeatedScalarFieldContainer[str]
    effects: Effects
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ..., cancelled_job_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class CompleteRequest(_message.Message):
    __slots__ = ["error", "job_id", "outcome", "result", "session_id"]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    error: str
    job_id: str
    outcome: Outcome
    result: _struct_pb2.Struct
    session_id: str
    def __init__(self, session_id: _Optional[str] = ..., job_id: _Optional[str] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class CompleteResponse(_message.Message):
    __slots__ = ["effects"]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    effects: Effects
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ...) -> None: ...

class ConfigureSessionRequest(_message.Message):
    __slots__ = ["epoch", "language", "record", "response_scheduling", "session_id"]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_SCHEDULING_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    epoch: str
    language: str
    record: bool
    response_scheduling: bool
    session_id: str
    def __init__(self, session_id: _Optional[str] = ..., language: _Optional[str] = ..., response_scheduling: bool = ..., epoch: _Optional[str] = ..., record: bool = ...) -> None: ...

class ConfigureSessionResponse(_message.Message):
    __slots__ = ["language", "record", "response_scheduling"]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_SCHEDULING_FIELD_NUMBER: _ClassVar[int]
    language: str
    record: bool
    response_scheduling: bool
    def __init__(self, language: _Optional[str] = ..., response_scheduling: bool = ..., record: bool = ...) -> None: ...

class ConnectRequest(_message.Message):
    __slots__ = ["connection_id", "epoch", "session_id"]
    CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    connection_id: str
    epoch: str
    session_id: str
    def __init__(self, session_id: _Optional[str] = ..., connection_id: _Optional[str] = ..., epoch: _Optional[str] = ...) -> None: ...

class ConnectResponse(_message.Message):
    __slots__ = ["effects", "epoch", "state"]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    effects: Effects
    epoch: str
    state: SessionState
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ..., epoch: _Optional[str] = ..., state: _Optional[_Union[SessionState, str]] = ...) -> None: ...

class DecideRequest(_message.Message):
    __slots__ = ["job_id", "prepared", "session_id", "wait"]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    PREPARED_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    prepared: bool
    session_id: str
    wait: _duration_pb2.Duration
    def __init__(self, session_id: _Optional[str] = ..., job_id: _Optional[str] = ..., prepared: bool = ..., wait: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class DecideResponse(_message.Message):
    __slots__ = ["decided_at", "decision", "job_id", "reason"]
    DECIDED_AT_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    decided_at: _timestamp_pb2.Timestamp
    decision: Decision
    job_id: str
    reason: str
    def __init__(self, decision: _Optional[_Union[Decision, str]] = ..., reason: _Optional[str] = ..., decided_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., job_id: _Optional[str] = ...) -> None: ...

class Effects(_message.Message):
    __slots__ = ["notes", "responses", "runs", "skips"]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    SKIPS_FIELD_NUMBER: _ClassVar[int]
    notes: _containers.RepeatedCompositeFieldContainer[Note]
    responses: _containers.RepeatedCompositeFieldContainer[FunctionResponse]
    runs: _containers.RepeatedCompositeFieldContainer[RunUpdate]
    skips: _containers.RepeatedCompositeFieldContainer[Skip]
    def __init__(self, responses: _Optional[_Iterable[_Union[FunctionResponse, _Mapping]]] = ..., skips: _Optional[_Iterable[_Union[Skip, _Mapping]]] = ..., notes: _Optional[_Iterable[_Union[Note, _Mapping]]] = ..., runs: _Optional[_Iterable[_Union[RunUpdate, _Mapping]]] = ...) -> None: ...

class FunctionResponse(_message.Message):
    __slots__ = ["call_id", "interim", "job_id", "name", "payload", "seq"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    INTERIM_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    interim: bool
    job_id: str
    name: str
    payload: _struct_pb2.Struct
    seq: int
    def __init__(self, call_id: _Optional[str] = ..., name: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., job_id: _Optional[str] = ..., interim: bool = ..., seq: _Optional[int] = ...) -> None: ...

class GetHistoryRequest(_message.Message):
    __slots__ = ["session_id"]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetHistoryResponse(_message.Message):
    __slots__ = ["bytes", "complete", "created_at", "dropped", "entries", "epoch", "first_seq", "max_bytes", "policy", "policy_digest", "record", "server_policy_digest", "session_id"]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    POLICY_DIGEST_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    SERVER_POLICY_DIGEST_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    bytes: int
    complete: bool
    created_at: _timestamp_pb2.Timestamp
    dropped: int
    entries: _containers.RepeatedCompositeFieldContainer[HistoryEntry]
    epoch: str
    first_seq: int
    max_bytes: int
    policy: _struct_pb2.Struct
    policy_digest: str
    record: bool
    server_policy_digest: str
    session_id: str
    def __init__(self, session_id: _Optional[str] = ..., epoch: _Optional[str] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., record: bool = ..., max_bytes: _Optional[int] = ..., bytes: _Optional[int] = ..., dropped: _Optional[int] = ..., first_seq: _Optional[int] = ..., complete: bool = ..., entries: _Optional[_Iterable[_Union[HistoryEntry, _Mapping]]] = ..., policy_digest: _Optional[str] = ..., server_policy_digest: _Optional[str] = ..., policy: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ["session_id"]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ["closed", "connection_id", "epoch", "jobs", "language", "last_seq", "model_speaking", "next_timer", "pending_calls", "response_scheduling", "runs", "session_id", "utterance_open", "version"]
    CLOSED_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    MODEL_SPEAKING_FIELD_NUMBER: _ClassVar[int]
    NEXT_TIMER_FIELD_NUMBER: _ClassVar[int]
    PENDING_CALLS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_SCHEDULING_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_OPEN_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    closed: bool
    connection_id: str
    epoch: str
    jobs: _containers.RepeatedCompositeFieldContainer[Job]
    language: str
    last_seq: int
    model_speaking: bool
    next_timer: _timestamp_pb2.Timestamp
    pending_calls: _containers.RepeatedCompositeFieldContainer[PendingCall]
    response_scheduling: bool
    runs: _containers.RepeatedCompositeFieldContainer[Run]
    session_id: str
    utterance_open: bool
    version: int
    def __init__(self, session_id: _Optional[str] = ..., pending_calls: _Optional[_Iterable[_Union[PendingCall, _Mapping]]] = ..., jobs: _Optional[_Iterable[_Union[Job, _Mapping]]] = ..., utterance_open: bool = ..., model_speaking: bool = ..., next_timer: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., closed: bool = ..., version: _Optional[int] = ..., runs: _Optional[_Iterable[_Union[Run, _Mapping]]] = ..., connection_id: _Optional[str] = ..., last_seq: _Optional[int] = ..., language: _Optional[str] = ..., response_scheduling: bool = ..., epoch: _Optional[str] = ...) -> None: ...

class HistoryCall(_message.Message):
    __slots__ = ["args", "behavior", "business_key", "call_id", "disposition", "duplicate_of", "job_id", "job_tool", "minted", "raw_args", "run_id", "side_effect", "tool", "tool_choice"]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_KEY_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    DISPOSITION_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_OF_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_TOOL_FIELD_NUMBER: _ClassVar[int]
    MINTED_FIELD_NUMBER: _ClassVar[int]
    RAW_ARGS_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SIDE_EFFECT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CHOICE_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    args: _struct_pb2.Struct
    behavior: Behavior
    business_key: str
    call_id: str
    disposition: Disposition
    duplicate_of: str
    job_id: str
    job_tool: str
    minted: bool
    raw_args: str
    run_id: str
    side_effect: bool
    tool: str
    tool_choice: ToolChoice
    def __init__(self, call_id: _Optional[str] = ..., minted: bool = ..., tool: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., raw_args: _Optional[str] = ..., behavior: _Optional[_Union[Behavior, str]] = ..., tool_choice: _Optional[_Union[ToolChoice, str]] = ..., business_key: _Optional[str] = ..., disposition: _Optional[_Union[Disposition, str]] = ..., job_id: _Optional[str] = ..., run_id: _Optional[str] = ..., duplicate_of: _Optional[str] = ..., job_tool: _Optional[str] = ..., side_effect: bool = ...) -> None: ...

class HistoryClose(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class HistoryComplete(_message.Message):
    __slots__ = ["error", "job_id", "outcome", "result"]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    error: str
    job_id: str
    outcome: Outcome
    result: _struct_pb2.Struct
    def __init__(self, job_id: _Optional[str] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class HistoryConfigure(_message.Message):
    __slots__ = ["language", "record", "response_scheduling"]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_SCHEDULING_FIELD_NUMBER: _ClassVar[int]
    language: str
    record: bool
    response_scheduling: bool
    def __init__(self, language: _Optional[str] = ..., response_scheduling: bool = ..., record: bool = ...) -> None: ...

class HistoryConnect(_message.Message):
    __slots__ = ["connection_id", "state"]
    CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    connection_id: str
    state: SessionState
    def __init__(self, connection_id: _Optional[str] = ..., state: _Optional[_Union[SessionState, str]] = ...) -> None: ...

class HistoryDecision(_message.Message):
    __slots__ = ["cause", "decision", "job_id", "reason"]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    cause: str
    decision: Decision
    job_id: str
    reason: str
    def __init__(self, job_id: _Optional[str] = ..., decision: _Optional[_Union[Decision, str]] = ..., cause: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class HistoryEntry(_message.Message):
    __slots__ = ["answered", "at", "call", "clipped", "close", "complete", "configure", "connect", "decision", "hold", "note", "observed_ms", "prepared", "progress", "response", "revoked", "run", "seq", "skip", "speech", "t_ms", "transcript", "withdraw"]
    ANSWERED_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    CLIPPED_FIELD_NUMBER: _ClassVar[int]
    CLOSE_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    CONFIGURE_FIELD_NUMBER: _ClassVar[int]
    CONNECT_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    HOLD_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_MS_FIELD_NUMBER: _ClassVar[int]
    PREPARED_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    SKIP_FIELD_NUMBER: _ClassVar[int]
    SPEECH_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_FIELD_NUMBER: _ClassVar[int]
    T_MS_FIELD_NUMBER: _ClassVar[int]
    WITHDRAW_FIELD_NUMBER: _ClassVar[int]
    answered: HistoryJob
    at: _timestamp_pb2.Timestamp
    call: HistoryCall
    clipped: bool
    close: HistoryClose
    complete: HistoryComplete
    configure: HistoryConfigure
    connect: HistoryConnect
    decision: HistoryDecision
    hold: HistoryHold
    note: Note
    observed_ms: int
    prepared: HistoryJob
    progress: HistoryProgress
    response: FunctionResponse
    revoked: HistoryJob
    run: RunUpdate
    seq: int
    skip: Skip
    speech: HistorySpeech
    t_ms: int
    transcript: HistoryTranscript
    withdraw: HistoryWithdraw
    def __init__(self, t_ms: _Optional[int] = ..., at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., observed_ms: _Optional[int] = ..., seq: _Optional[int] = ..., clipped: bool = ..., call: _Optional[_Union[HistoryCall, _Mapping]] = ..., speech: _Optional[_Union[HistorySpeech, _Mapping]] = ..., transcript: _Optional[_Union[HistoryTranscript, _Mapping]] = ..., withdraw: _Optional[_Union[HistoryWithdraw, _Mapping]] = ..., prepared: _Optional[_Union[HistoryJob, _Mapping]] = ..., complete: _Optional[_Union[HistoryComplete, _Mapping]] = ..., configure: _Optional[_Union[HistoryConfigure, _Mapping]] = ..., connect: _Optional[_Union[HistoryConnect, _Mapping]] = ..., progress: _Optional[_Union[HistoryProgress, _Mapping]] = ..., close: _Optional[_Union[HistoryClose, _Mapping]] = ..., decision: _Optional[_Union[HistoryDecision, _Mapping]] = ..., revoked: _Optional[_Union[HistoryJob, _Mapping]] = ..., hold: _Optional[_Union[HistoryHold, _Mapping]] = ..., answered: _Optional[_Union[HistoryJob, _Mapping]] = ..., response: _Optional[_Union[FunctionResponse, _Mapping]] = ..., skip: _Optional[_Union[Skip, _Mapping]] = ..., note: _Optional[_Union[Note, _Mapping]] = ..., run: _Optional[_Union[RunUpdate, _Mapping]] = ...) -> None: ...

class HistoryHold(_message.Message):
    __slots__ = ["abandoned", "end", "job_id", "utterance"]
    ABANDONED_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_FIELD_NUMBER: _ClassVar[int]
    abandoned: bool
    end: bool
    job_id: str
    utterance: int
    def __init__(self, job_id: _Optional[str] = ..., utterance: _Optional[int] = ..., abandoned: bool = ..., end: bool = ...) -> None: ...

class HistoryJob(_message.Message):
    __slots__ = ["job_id"]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class HistoryProgress(_message.Message):
    __slots__ = ["job_id", "result"]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    result: _struct_pb2.Struct
    def __init__(self, job_id: _Optional[str] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class HistorySpeech(_message.Message):
    __slots__ = ["event", "utterance", "utterance_id"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_ID_FIELD_NUMBER: _ClassVar[int]
    event: SpeechEvent
    utterance: int
    utterance_id: str
    def __init__(self, event: _Optional[_Union[SpeechEvent, str]] = ..., utterance_id: _Optional[str] = ..., utterance: _Optional[int] = ...) -> None: ...

class HistoryTranscript(_message.Message):
    __slots__ = ["intent", "interim", "role", "text", "utterance", "utterance_id"]
    INTENT_FIELD_NUMBER: _ClassVar[int]
    INTERIM_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_ID_FIELD_NUMBER: _ClassVar[int]
    intent: str
    interim: bool
    role: Role
    text: str
    utterance: int
    utterance_id: str
    def __init__(self, role: _Optional[_Union[Role, str]] = ..., text: _Optional[str] = ..., interim: bool = ..., utterance_id: _Optional[str] = ..., utterance: _Optional[int] = ..., intent: _Optional[str] = ...) -> None: ...

class HistoryWithdraw(_message.Message):
    __slots__ = ["call_ids", "reason"]
    CALL_IDS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    call_ids: _containers.RepeatedScalarFieldContainer[str]
    reason: CancellationReason
    def __init__(self, call_ids: _Optional[_Iterable[str]] = ..., reason: _Optional[_Union[CancellationReason, str]] = ...) -> None: ...

class Job(_message.Message):
    __slots__ = ["abandoned", "business_key", "call_ids", "created_at", "decision", "job_id", "outcome", "reason", "side_effect", "state", "tool"]
    ABANDONED_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_KEY_FIELD_NUMBER: _ClassVar[int]
    CALL_IDS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SIDE_EFFECT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    abandoned: bool
    business_key: str
    call_ids: _containers.RepeatedScalarFieldContainer[str]
    created_at: _timestamp_pb2.Timestamp
    decision: Decision
    job_id: str
    outcome: Outcome
    reason: str
    side_effect: bool
    state: JobState
    tool: str
    def __init__(self, job_id: _Optional[str] = ..., tool: _Optional[str] = ..., business_key: _Optional[str] = ..., state: _Optional[_Union[JobState, str]] = ..., decision: _Optional[_Union[Decision, str]] = ..., reason: _Optional[str] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., call_ids: _Optional[_Iterable[str]] = ..., abandoned: bool = ..., side_effect: bool = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Note(_message.Message):
    __slots__ = ["call_id", "deliver", "job_id", "run_id", "scheduling", "seq", "text", "via", "why"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    DELIVER_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    VIA_FIELD_NUMBER: _ClassVar[int]
    WHY_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    deliver: Delivery
    job_id: str
    run_id: str
    scheduling: Scheduling
    seq: int
    text: str
    via: NoteVia
    why: str
    def __init__(self, job_id: _Optional[str] = ..., text: _Optional[str] = ..., deliver: _Optional[_Union[Delivery, str]] = ..., via: _Optional[_Union[NoteVia, str]] = ..., call_id: _Optional[str] = ..., scheduling: _Optional[_Union[Scheduling, str]] = ..., why: _Optional[str] = ..., run_id: _Optional[str] = ..., seq: _Optional[int] = ...) -> None: ...

class PendingCall(_message.Message):
    __slots__ = ["age", "behavior", "call_id", "job_id", "tool"]
    AGE_FIELD_NUMBER: _ClassVar[int]
    BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    age: _duration_pb2.Duration
    behavior: Behavior
    call_id: str
    job_id: str
    tool: str
    def __init__(self, call_id: _Optional[str] = ..., tool: _Optional[str] = ..., job_id: _Optional[str] = ..., age: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., behavior: _Optional[_Union[Behavior, str]] = ...) -> None: ...

class PollRequest(_message.Message):
    __slots__ = ["after_seq", "session_id"]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    after_seq: int
    session_id: str
    def __init__(self, session_id: _Optional[str] = ..., after_seq: _Optional[int] = ...) -> None: ...

class PollResponse(_message.Message):
    __slots__ = ["effects", "next_timer"]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_TIMER_FIELD_NUMBER: _ClassVar[int]
    effects: Effects
    next_timer: _timestamp_pb2.Timestamp
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ..., next_timer: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RegisterCallRequest(_message.Message):
    __slots__ = ["age", "args", "behavior", "business_key", "call_id", "epoch", "raw_args", "session_id", "tool", "tool_choice"]
    AGE_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_KEY_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    RAW_ARGS_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CHOICE_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    age: _duration_pb2.Duration
    args: _struct_pb2.Struct
    behavior: Behavior
    business_key: str
    call_id: str
    epoch: str
    raw_args: str
    session_id: str
    tool: str
    tool_choice: ToolChoice
    def __init__(self, session_id: _Optional[str] = ..., call_id: _Optional[str] = ..., tool: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., behavior: _Optional[_Union[Behavior, str]] = ..., tool_choice: _Optional[_Union[ToolChoice, str]] = ..., business_key: _Optional[str] = ..., age: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., raw_args: _Optional[str] = ..., epoch: _Optional[str] = ...) -> None: ...

class RegisterCallResponse(_message.Message):
    __slots__ = ["business_key", "call_id", "disposition", "duplicate_of", "effects", "job_args", "job_id", "job_tool", "run_id", "side_effect"]
    BUSINESS_KEY_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    DISPOSITION_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_OF_FIELD_NUMBER: _ClassVar[int]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    JOB_ARGS_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_TOOL_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SIDE_EFFECT_FIELD_NUMBER: _ClassVar[int]
    business_key: str
    call_id: str
    disposition: Disposition
    duplicate_of: str
    effects: Effects
    job_args: _struct_pb2.Struct
    job_id: str
    job_tool: str
    run_id: str
    side_effect: bool
    def __init__(self, call_id: _Optional[str] = ..., disposition: _Optional[_Union[Disposition, str]] = ..., job_id: _Optional[str] = ..., duplicate_of: _Optional[str] = ..., business_key: _Optional[str] = ..., side_effect: bool = ..., effects: _Optional[_Union[Effects, _Mapping]] = ..., run_id: _Optional[str] = ..., job_tool: _Optional[str] = ..., job_args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ReportProgressRequest(_message.Message):
    __slots__ = ["event_id", "job_id", "result", "session_id"]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    job_id: str
    result: _struct_pb2.Struct
    session_id: str
    def __init__(self, session_id: _Optional[str] = ..., job_id: _Optional[str] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., event_id: _Optional[str] = ...) -> None: ...

class ReportProgressResponse(_message.Message):
    __slots__ = ["effects", "repeat"]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    REPEAT_FIELD_NUMBER: _ClassVar[int]
    effects: Effects
    repeat: bool
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ..., repeat: bool = ...) -> None: ...

class ReportSpeechRequest(_message.Message):
    __slots__ = ["age", "epoch", "event", "event_id", "session_id", "utterance_id"]
    AGE_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_ID_FIELD_NUMBER: _ClassVar[int]
    age: _duration_pb2.Duration
    epoch: str
    event: SpeechEvent
    event_id: str
    session_id: str
    utterance_id: str
    def __init__(self, session_id: _Optional[str] = ..., event: _Optional[_Union[SpeechEvent, str]] = ..., epoch: _Optional[str] = ..., utterance_id: _Optional[str] = ..., age: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., event_id: _Optional[str] = ...) -> None: ...

class ReportSpeechResponse(_message.Message):
    __slots__ = ["effects", "repeat"]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    REPEAT_FIELD_NUMBER: _ClassVar[int]
    effects: Effects
    repeat: bool
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ..., repeat: bool = ...) -> None: ...

class ReportToolCallCancellationRequest(_message.Message):
    __slots__ = ["age", "call_ids", "event_id", "reason", "session_id"]
    AGE_FIELD_NUMBER: _ClassVar[int]
    CALL_IDS_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    age: _duration_pb2.Duration
    call_ids: _containers.RepeatedScalarFieldContainer[str]
    event_id: str
    reason: CancellationReason
    session_id: str
    def __init__(self, session_id: _Optional[str] = ..., call_ids: _Optional[_Iterable[str]] = ..., age: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., reason: _Optional[_Union[CancellationReason, str]] = ..., event_id: _Optional[str] = ...) -> None: ...

class ReportToolCallCancellationResponse(_message.Message):
    __slots__ = ["cancelled_job_ids", "effects", "repeat"]
    CANCELLED_JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    REPEAT_FIELD_NUMBER: _ClassVar[int]
    cancelled_job_ids: _containers.RepeatedScalarFieldContainer[str]
    effects: Effects
    repeat: bool
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ..., cancelled_job_ids: _Optional[_Iterable[str]] = ..., repeat: bool = ...) -> None: ...

class ReportTranscriptRequest(_message.Message):
    __slots__ = ["age", "epoch", "event_id", "interim", "role", "session_id", "text", "utterance_id"]
    AGE_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    INTERIM_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_ID_FIELD_NUMBER: _ClassVar[int]
    age: _duration_pb2.Duration
    epoch: str
    event_id: str
    interim: bool
    role: Role
    session_id: str
    text: str
    utterance_id: str
    def __init__(self, session_id: _Optional[str] = ..., role: _Optional[_Union[Role, str]] = ..., text: _Optional[str] = ..., interim: bool = ..., epoch: _Optional[str] = ..., utterance_id: _Optional[str] = ..., age: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., event_id: _Optional[str] = ...) -> None: ...

class ReportTranscriptResponse(_message.Message):
    __slots__ = ["cancelled_job_ids", "effects", "intent", "repeat"]
    CANCELLED_JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    INTENT_FIELD_NUMBER: _ClassVar[int]
    REPEAT_FIELD_NUMBER: _ClassVar[int]
    cancelled_job_ids: _containers.RepeatedScalarFieldContainer[str]
    effects: Effects
    intent: str
    repeat: bool
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ..., intent: _Optional[str] = ..., cancelled_job_ids: _Optional[_Iterable[str]] = ..., repeat: bool = ...) -> None: ...

class Run(_message.Message):
    __slots__ = ["call_ids", "job_id", "opened_at", "reason", "run_id", "state", "tool"]
    CALL_IDS_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    OPENED_AT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    call_ids: _containers.RepeatedScalarFieldContainer[str]
    job_id: str
    opened_at: _timestamp_pb2.Timestamp
    reason: str
    run_id: str
    state: RunState
    tool: str
    def __init__(self, run_id: _Optional[str] = ..., tool: _Optional[str] = ..., state: _Optional[_Union[RunState, str]] = ..., call_ids: _Optional[_Iterable[str]] = ..., job_id: _Optional[str] = ..., reason: _Optional[str] = ..., opened_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RunUpdate(_message.Message):
    __slots__ = ["call_id", "job_id", "reason", "run_id", "seq", "state", "tool"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    job_id: str
    reason: str
    run_id: str
    seq: int
    state: RunState
    tool: str
    def __init__(self, run_id: _Optional[str] = ..., tool: _Optional[str] = ..., state: _Optional[_Union[RunState, str]] = ..., call_id: _Optional[str] = ..., job_id: _Optional[str] = ..., reason: _Optional[str] = ..., seq: _Optional[int] = ...) -> None: ...

class Skip(_message.Message):
    __slots__ = ["call_id", "job_id", "name", "reason", "seq"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    job_id: str
    name: str
    reason: str
    seq: int
    def __init__(self, call_id: _Optional[str] = ..., name: _Optional[str] = ..., reason: _Optional[str] = ..., job_id: _Optional[str] = ..., seq: _Optional[int] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ["after_seq", "session_id"]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    after_seq: int
    session_id: str
    def __init__(self, session_id: _Optional[str] = ..., after_seq: _Optional[int] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ["at", "note", "response", "run", "seq", "skip"]
    AT_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    SKIP_FIELD_NUMBER: _ClassVar[int]
    at: _timestamp_pb2.Timestamp
    note: Note
    response: FunctionResponse
    run: RunUpdate
    seq: int
    skip: Skip
    def __init__(self, seq: _Optional[int] = ..., at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., response: _Optional[_Union[FunctionResponse, _Mapping]] = ..., skip: _Optional[_Union[Skip, _Mapping]] = ..., note: _Optional[_Union[Note, _Mapping]] = ..., run: _Optional[_Union[RunUpdate, _Mapping]] = ...) -> None: ...

class Behavior(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ToolChoice(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Disposition(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class SpeechEvent(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class CancellationReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Decision(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class RunState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class SessionState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class JobState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Delivery(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class NoteVia(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Scheduling(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
