from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Behavior(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BEHAVIOR_UNSPECIFIED: _ClassVar[Behavior]
    BEHAVIOR_BLOCKING: _ClassVar[Behavior]
    BEHAVIOR_NON_BLOCKING: _ClassVar[Behavior]

class ToolChoice(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOOL_CHOICE_UNSPECIFIED: _ClassVar[ToolChoice]
    TOOL_CHOICE_AUTO: _ClassVar[ToolChoice]
    TOOL_CHOICE_NONE: _ClassVar[ToolChoice]

class Disposition(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DISPOSITION_UNSPECIFIED: _ClassVar[Disposition]
    DISPOSITION_EXECUTE: _ClassVar[Disposition]
    DISPOSITION_DUPLICATE: _ClassVar[Disposition]
    DISPOSITION_REJECT: _ClassVar[Disposition]
    DISPOSITION_RUN: _ClassVar[Disposition]

class SpeechEvent(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SPEECH_EVENT_UNSPECIFIED: _ClassVar[SpeechEvent]
    SPEECH_EVENT_USER_ACTIVITY_START: _ClassVar[SpeechEvent]
    SPEECH_EVENT_USER_ACTIVITY_END: _ClassVar[SpeechEvent]
    SPEECH_EVENT_MODEL_OUTPUT_START: _ClassVar[SpeechEvent]
    SPEECH_EVENT_MODEL_GENERATION_COMPLETE: _ClassVar[SpeechEvent]
    SPEECH_EVENT_MODEL_TURN_COMPLETE: _ClassVar[SpeechEvent]
    SPEECH_EVENT_INTERRUPTED: _ClassVar[SpeechEvent]

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROLE_UNSPECIFIED: _ClassVar[Role]
    ROLE_USER: _ClassVar[Role]
    ROLE_MODEL: _ClassVar[Role]

class CancellationReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CANCELLATION_REASON_UNSPECIFIED: _ClassVar[CancellationReason]
    CANCELLATION_REASON_WITHDRAWN: _ClassVar[CancellationReason]
    CANCELLATION_REASON_PROVIDER_TIMEOUT: _ClassVar[CancellationReason]

class Decision(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_UNSPECIFIED: _ClassVar[Decision]
    DECISION_PENDING: _ClassVar[Decision]
    DECISION_COMMIT: _ClassVar[Decision]
    DECISION_CANCEL: _ClassVar[Decision]

class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OUTCOME_UNSPECIFIED: _ClassVar[Outcome]
    OUTCOME_COMMITTED: _ClassVar[Outcome]
    OUTCOME_CANCELLED: _ClassVar[Outcome]
    OUTCOME_FAILED: _ClassVar[Outcome]
    OUTCOME_RESULT: _ClassVar[Outcome]
    OUTCOME_UNKNOWN: _ClassVar[Outcome]

class RunState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_STATE_UNSPECIFIED: _ClassVar[RunState]
    RUN_STATE_OPENED: _ClassVar[RunState]
    RUN_STATE_CONFIRMED: _ClassVar[RunState]
    RUN_STATE_REFUSED: _ClassVar[RunState]
    RUN_STATE_EXPIRED: _ClassVar[RunState]
    RUN_STATE_CANCELLED: _ClassVar[RunState]

class SessionState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SESSION_STATE_UNSPECIFIED: _ClassVar[SessionState]
    SESSION_STATE_NEW: _ClassVar[SessionState]
    SESSION_STATE_RESUMED: _ClassVar[SessionState]
    SESSION_STATE_LOST: _ClassVar[SessionState]

class JobState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_STATE_UNSPECIFIED: _ClassVar[JobState]
    JOB_STATE_PREPARING: _ClassVar[JobState]
    JOB_STATE_PREPARED: _ClassVar[JobState]
    JOB_STATE_DECIDED: _ClassVar[JobState]
    JOB_STATE_RUNNING: _ClassVar[JobState]
    JOB_STATE_DONE: _ClassVar[JobState]

class Delivery(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DELIVERY_UNSPECIFIED: _ClassVar[Delivery]
    DELIVERY_NOW: _ClassVar[Delivery]
    DELIVERY_WHEN_IDLE: _ClassVar[Delivery]

class NoteVia(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NOTE_VIA_UNSPECIFIED: _ClassVar[NoteVia]
    NOTE_VIA_USER_TURN: _ClassVar[NoteVia]
    NOTE_VIA_FUNCTION_RESPONSE: _ClassVar[NoteVia]

class Scheduling(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCHEDULING_UNSPECIFIED: _ClassVar[Scheduling]
    SCHEDULING_WHEN_IDLE: _ClassVar[Scheduling]
    SCHEDULING_INTERRUPT: _ClassVar[Scheduling]
    SCHEDULING_SILENT: _ClassVar[Scheduling]
BEHAVIOR_UNSPECIFIED: Behavior
BEHAVIOR_BLOCKING: Behavior
BEHAVIOR_NON_BLOCKING: Behavior
TOOL_CHOICE_UNSPECIFIED: ToolChoice
TOOL_CHOICE_AUTO: ToolChoice
TOOL_CHOICE_NONE: ToolChoice
DISPOSITION_UNSPECIFIED: Disposition
DISPOSITION_EXECUTE: Disposition
DISPOSITION_DUPLICATE: Disposition
DISPOSITION_REJECT: Disposition
DISPOSITION_RUN: Disposition
SPEECH_EVENT_UNSPECIFIED: SpeechEvent
SPEECH_EVENT_USER_ACTIVITY_START: SpeechEvent
SPEECH_EVENT_USER_ACTIVITY_END: SpeechEvent
SPEECH_EVENT_MODEL_OUTPUT_START: SpeechEvent
SPEECH_EVENT_MODEL_GENERATION_COMPLETE: SpeechEvent
SPEECH_EVENT_MODEL_TURN_COMPLETE: SpeechEvent
SPEECH_EVENT_INTERRUPTED: SpeechEvent
ROLE_UNSPECIFIED: Role
ROLE_USER: Role
ROLE_MODEL: Role
CANCELLATION_REASON_UNSPECIFIED: CancellationReason
CANCELLATION_REASON_WITHDRAWN: CancellationReason
CANCELLATION_REASON_PROVIDER_TIMEOUT: CancellationReason
DECISION_UNSPECIFIED: Decision
DECISION_PENDING: Decision
DECISION_COMMIT: Decision
DECISION_CANCEL: Decision
OUTCOME_UNSPECIFIED: Outcome
OUTCOME_COMMITTED: Outcome
OUTCOME_CANCELLED: Outcome
OUTCOME_FAILED: Outcome
OUTCOME_RESULT: Outcome
OUTCOME_UNKNOWN: Outcome
RUN_STATE_UNSPECIFIED: RunState
RUN_STATE_OPENED: RunState
RUN_STATE_CONFIRMED: RunState
RUN_STATE_REFUSED: RunState
RUN_STATE_EXPIRED: RunState
RUN_STATE_CANCELLED: RunState
SESSION_STATE_UNSPECIFIED: SessionState
SESSION_STATE_NEW: SessionState
SESSION_STATE_RESUMED: SessionState
SESSION_STATE_LOST: SessionState
JOB_STATE_UNSPECIFIED: JobState
JOB_STATE_PREPARING: JobState
JOB_STATE_PREPARED: JobState
JOB_STATE_DECIDED: JobState
JOB_STATE_RUNNING: JobState
JOB_STATE_DONE: JobState
DELIVERY_UNSPECIFIED: Delivery
DELIVERY_NOW: Delivery
DELIVERY_WHEN_IDLE: Delivery
NOTE_VIA_UNSPECIFIED: NoteVia
NOTE_VIA_USER_TURN: NoteVia
NOTE_VIA_FUNCTION_RESPONSE: NoteVia
SCHEDULING_UNSPECIFIED: Scheduling
SCHEDULING_WHEN_IDLE: Scheduling
SCHEDULING_INTERRUPT: Scheduling
SCHEDULING_SILENT: Scheduling

class RegisterCallRequest(_message.Message):
    __slots__ = ("session_id", "call_id", "tool", "args", "behavior", "tool_choice", "business_key", "age", "raw_args", "epoch")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    TOOL_CHOICE_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_KEY_FIELD_NUMBER: _ClassVar[int]
    AGE_FIELD_NUMBER: _ClassVar[int]
    RAW_ARGS_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    call_id: str
    tool: str
    args: _struct_pb2.Struct
    behavior: Behavior
    tool_choice: ToolChoice
    business_key: str
    age: _duration_pb2.Duration
    raw_args: str
    epoch: str
    def __init__(self, session_id: _Optional[str] = ..., call_id: _Optional[str] = ..., tool: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., behavior: _Optional[_Union[Behavior, str]] = ..., tool_choice: _Optional[_Union[ToolChoice, str]] = ..., business_key: _Optional[str] = ..., age: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., raw_args: _Optional[str] = ..., epoch: _Optional[str] = ...) -> None: ...

class RegisterCallResponse(_message.Message):
    __slots__ = ("call_id", "disposition", "job_id", "duplicate_of", "business_key", "side_effect", "effects", "run_id", "job_tool", "job_args")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    DISPOSITION_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_OF_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_KEY_FIELD_NUMBER: _ClassVar[int]
    SIDE_EFFECT_FIELD_NUMBER: _ClassVar[int]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_TOOL_FIELD_NUMBER: _ClassVar[int]
    JOB_ARGS_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    disposition: Disposition
    job_id: str
    duplicate_of: str
    business_key: str
    side_effect: bool
    effects: Effects
    run_id: str
    job_tool: str
    job_args: _struct_pb2.Struct
    def __init__(self, call_id: _Optional[str] = ..., disposition: _Optional[_Union[Disposition, str]] = ..., job_id: _Optional[str] = ..., duplicate_of: _Optional[str] = ..., business_key: _Optional[str] = ..., side_effect: bool = ..., effects: _Optional[_Union[Effects, _Mapping]] = ..., run_id: _Optional[str] = ..., job_tool: _Optional[str] = ..., job_args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ReportSpeechRequest(_message.Message):
    __slots__ = ("session_id", "event", "epoch", "utterance_id", "age", "event_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_ID_FIELD_NUMBER: _ClassVar[int]
    AGE_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    event: SpeechEvent
    epoch: str
    utterance_id: str
    age: _duration_pb2.Duration
    event_id: str
    def __init__(self, session_id: _Optional[str] = ..., event: _Optional[_Union[SpeechEvent, str]] = ..., epoch: _Optional[str] = ..., utterance_id: _Optional[str] = ..., age: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., event_id: _Optional[str] = ...) -> None: ...

class ReportSpeechResponse(_message.Message):
    __slots__ = ("effects", "repeat")
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    REPEAT_FIELD_NUMBER: _ClassVar[int]
    effects: Effects
    repeat: bool
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ..., repeat: bool = ...) -> None: ...

class ReportTranscriptRequest(_message.Message):
    __slots__ = ("session_id", "role", "text", "interim", "epoch", "utterance_id", "age", "event_id", "reading")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    INTERIM_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_ID_FIELD_NUMBER: _ClassVar[int]
    AGE_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    READING_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    role: Role
    text: str
    interim: bool
    epoch: str
    utterance_id: str
    age: _duration_pb2.Duration
    event_id: str
    reading: AgentReading
    def __init__(self, session_id: _Optional[str] = ..., role: _Optional[_Union[Role, str]] = ..., text: _Optional[str] = ..., interim: bool = ..., epoch: _Optional[str] = ..., utterance_id: _Optional[str] = ..., age: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., event_id: _Optional[str] = ..., reading: _Optional[_Union[AgentReading, _Mapping]] = ...) -> None: ...

class AgentReading(_message.Message):
    __slots__ = ("intent", "confidence", "source")
    INTENT_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    intent: str
    confidence: float
    source: str
    def __init__(self, intent: _Optional[str] = ..., confidence: _Optional[float] = ..., source: _Optional[str] = ...) -> None: ...

class ReportTranscriptResponse(_message.Message):
    __slots__ = ("effects", "intent", "cancelled_job_ids", "repeat")
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    INTENT_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    REPEAT_FIELD_NUMBER: _ClassVar[int]
    effects: Effects
    intent: str
    cancelled_job_ids: _containers.RepeatedScalarFieldContainer[str]
    repeat: bool
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ..., intent: _Optional[str] = ..., cancelled_job_ids: _Optional[_Iterable[str]] = ..., repeat: bool = ...) -> None: ...

class ReportToolCallCancellationRequest(_message.Message):
    __slots__ = ("session_id", "call_ids", "age", "reason", "event_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CALL_IDS_FIELD_NUMBER: _ClassVar[int]
    AGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    call_ids: _containers.RepeatedScalarFieldContainer[str]
    age: _duration_pb2.Duration
    reason: CancellationReason
    event_id: str
    def __init__(self, session_id: _Optional[str] = ..., call_ids: _Optional[_Iterable[str]] = ..., age: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., reason: _Optional[_Union[CancellationReason, str]] = ..., event_id: _Optional[str] = ...) -> None: ...

class ReportToolCallCancellationResponse(_message.Message):
    __slots__ = ("effects", "cancelled_job_ids", "repeat")
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    REPEAT_FIELD_NUMBER: _ClassVar[int]
    effects: Effects
    cancelled_job_ids: _containers.RepeatedScalarFieldContainer[str]
    repeat: bool
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ..., cancelled_job_ids: _Optional[_Iterable[str]] = ..., repeat: bool = ...) -> None: ...

class DecideRequest(_message.Message):
    __slots__ = ("session_id", "job_id", "prepared", "wait", "events_delivered", "call_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    PREPARED_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    EVENTS_DELIVERED_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    job_id: str
    prepared: bool
    wait: _duration_pb2.Duration
    events_delivered: bool
    call_id: str
    def __init__(self, session_id: _Optional[str] = ..., job_id: _Optional[str] = ..., prepared: bool = ..., wait: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., events_delivered: bool = ..., call_id: _Optional[str] = ...) -> None: ...

class DecideResponse(_message.Message):
    __slots__ = ("decision", "reason", "decided_at", "job_id", "session_id")
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DECIDED_AT_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    decision: Decision
    reason: str
    decided_at: _timestamp_pb2.Timestamp
    job_id: str
    session_id: str
    def __init__(self, decision: _Optional[_Union[Decision, str]] = ..., reason: _Optional[str] = ..., decided_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., job_id: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class CompleteRequest(_message.Message):
    __slots__ = ("session_id", "job_id", "outcome", "result", "error", "call_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    job_id: str
    outcome: Outcome
    result: _struct_pb2.Struct
    error: str
    call_id: str
    def __init__(self, session_id: _Optional[str] = ..., job_id: _Optional[str] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., error: _Optional[str] = ..., call_id: _Optional[str] = ...) -> None: ...

class CompleteResponse(_message.Message):
    __slots__ = ("effects",)
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    effects: Effects
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ...) -> None: ...

class ConfigureSessionRequest(_message.Message):
    __slots__ = ("session_id", "language", "response_scheduling", "epoch", "record", "time_zone")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_SCHEDULING_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    language: str
    response_scheduling: bool
    epoch: str
    record: bool
    time_zone: str
    def __init__(self, session_id: _Optional[str] = ..., language: _Optional[str] = ..., response_scheduling: bool = ..., epoch: _Optional[str] = ..., record: bool = ..., time_zone: _Optional[str] = ...) -> None: ...

class ConfigureSessionResponse(_message.Message):
    __slots__ = ("language", "response_scheduling", "record", "time_zone")
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_SCHEDULING_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    language: str
    response_scheduling: bool
    record: bool
    time_zone: str
    def __init__(self, language: _Optional[str] = ..., response_scheduling: bool = ..., record: bool = ..., time_zone: _Optional[str] = ...) -> None: ...

class PollRequest(_message.Message):
    __slots__ = ("session_id", "after_seq")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    after_seq: int
    def __init__(self, session_id: _Optional[str] = ..., after_seq: _Optional[int] = ...) -> None: ...

class PollResponse(_message.Message):
    __slots__ = ("effects", "next_timer")
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_TIMER_FIELD_NUMBER: _ClassVar[int]
    effects: Effects
    next_timer: _timestamp_pb2.Timestamp
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ..., next_timer: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ("session_id", "pending_calls", "jobs", "utterance_open", "model_speaking", "next_timer", "closed", "version", "runs", "connection_id", "last_seq", "language", "response_scheduling", "epoch", "time_zone")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PENDING_CALLS_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_OPEN_FIELD_NUMBER: _ClassVar[int]
    MODEL_SPEAKING_FIELD_NUMBER: _ClassVar[int]
    NEXT_TIMER_FIELD_NUMBER: _ClassVar[int]
    CLOSED_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_SCHEDULING_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    pending_calls: _containers.RepeatedCompositeFieldContainer[PendingCall]
    jobs: _containers.RepeatedCompositeFieldContainer[Job]
    utterance_open: bool
    model_speaking: bool
    next_timer: _timestamp_pb2.Timestamp
    closed: bool
    version: int
    runs: _containers.RepeatedCompositeFieldContainer[Run]
    connection_id: str
    last_seq: int
    language: str
    response_scheduling: bool
    epoch: str
    time_zone: str
    def __init__(self, session_id: _Optional[str] = ..., pending_calls: _Optional[_Iterable[_Union[PendingCall, _Mapping]]] = ..., jobs: _Optional[_Iterable[_Union[Job, _Mapping]]] = ..., utterance_open: bool = ..., model_speaking: bool = ..., next_timer: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., closed: bool = ..., version: _Optional[int] = ..., runs: _Optional[_Iterable[_Union[Run, _Mapping]]] = ..., connection_id: _Optional[str] = ..., last_seq: _Optional[int] = ..., language: _Optional[str] = ..., response_scheduling: bool = ..., epoch: _Optional[str] = ..., time_zone: _Optional[str] = ...) -> None: ...

class Run(_message.Message):
    __slots__ = ("run_id", "tool", "state", "call_ids", "job_id", "reason", "opened_at")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CALL_IDS_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    OPENED_AT_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    tool: str
    state: RunState
    call_ids: _containers.RepeatedScalarFieldContainer[str]
    job_id: str
    reason: str
    opened_at: _timestamp_pb2.Timestamp
    def __init__(self, run_id: _Optional[str] = ..., tool: _Optional[str] = ..., state: _Optional[_Union[RunState, str]] = ..., call_ids: _Optional[_Iterable[str]] = ..., job_id: _Optional[str] = ..., reason: _Optional[str] = ..., opened_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RunUpdate(_message.Message):
    __slots__ = ("run_id", "tool", "state", "call_id", "job_id", "reason", "seq")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    tool: str
    state: RunState
    call_id: str
    job_id: str
    reason: str
    seq: int
    def __init__(self, run_id: _Optional[str] = ..., tool: _Optional[str] = ..., state: _Optional[_Union[RunState, str]] = ..., call_id: _Optional[str] = ..., job_id: _Optional[str] = ..., reason: _Optional[str] = ..., seq: _Optional[int] = ...) -> None: ...

class ConnectRequest(_message.Message):
    __slots__ = ("session_id", "connection_id", "epoch")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    connection_id: str
    epoch: str
    def __init__(self, session_id: _Optional[str] = ..., connection_id: _Optional[str] = ..., epoch: _Optional[str] = ...) -> None: ...

class ConnectResponse(_message.Message):
    __slots__ = ("effects", "epoch", "state")
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    effects: Effects
    epoch: str
    state: SessionState
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ..., epoch: _Optional[str] = ..., state: _Optional[_Union[SessionState, str]] = ...) -> None: ...

class ReportProgressRequest(_message.Message):
    __slots__ = ("session_id", "job_id", "result", "event_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    job_id: str
    result: _struct_pb2.Struct
    event_id: str
    def __init__(self, session_id: _Optional[str] = ..., job_id: _Optional[str] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., event_id: _Optional[str] = ...) -> None: ...

class ReportProgressResponse(_message.Message):
    __slots__ = ("effects", "repeat")
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    REPEAT_FIELD_NUMBER: _ClassVar[int]
    effects: Effects
    repeat: bool
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ..., repeat: bool = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("session_id", "after_seq")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    after_seq: int
    def __init__(self, session_id: _Optional[str] = ..., after_seq: _Optional[int] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("seq", "at", "response", "skip", "note", "run")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    SKIP_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    seq: int
    at: _timestamp_pb2.Timestamp
    response: FunctionResponse
    skip: Skip
    note: Note
    run: RunUpdate
    def __init__(self, seq: _Optional[int] = ..., at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., response: _Optional[_Union[FunctionResponse, _Mapping]] = ..., skip: _Optional[_Union[Skip, _Mapping]] = ..., note: _Optional[_Union[Note, _Mapping]] = ..., run: _Optional[_Union[RunUpdate, _Mapping]] = ...) -> None: ...

class PendingCall(_message.Message):
    __slots__ = ("call_id", "tool", "job_id", "age", "behavior")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    AGE_FIELD_NUMBER: _ClassVar[int]
    BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    tool: str
    job_id: str
    age: _duration_pb2.Duration
    behavior: Behavior
    def __init__(self, call_id: _Optional[str] = ..., tool: _Optional[str] = ..., job_id: _Optional[str] = ..., age: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., behavior: _Optional[_Union[Behavior, str]] = ...) -> None: ...

class Job(_message.Message):
    __slots__ = ("job_id", "tool", "business_key", "state", "decision", "reason", "outcome", "call_ids", "abandoned", "side_effect", "created_at")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_KEY_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    CALL_IDS_FIELD_NUMBER: _ClassVar[int]
    ABANDONED_FIELD_NUMBER: _ClassVar[int]
    SIDE_EFFECT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    tool: str
    business_key: str
    state: JobState
    decision: Decision
    reason: str
    outcome: Outcome
    call_ids: _containers.RepeatedScalarFieldContainer[str]
    abandoned: bool
    side_effect: bool
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, job_id: _Optional[str] = ..., tool: _Optional[str] = ..., business_key: _Optional[str] = ..., state: _Optional[_Union[JobState, str]] = ..., decision: _Optional[_Union[Decision, str]] = ..., reason: _Optional[str] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., call_ids: _Optional[_Iterable[str]] = ..., abandoned: bool = ..., side_effect: bool = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CloseSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class CloseSessionResponse(_message.Message):
    __slots__ = ("effects", "cancelled_job_ids")
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    effects: Effects
    cancelled_job_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, effects: _Optional[_Union[Effects, _Mapping]] = ..., cancelled_job_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class Effects(_message.Message):
    __slots__ = ("responses", "skips", "notes", "runs")
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    SKIPS_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    responses: _containers.RepeatedCompositeFieldContainer[FunctionResponse]
    skips: _containers.RepeatedCompositeFieldContainer[Skip]
    notes: _containers.RepeatedCompositeFieldContainer[Note]
    runs: _containers.RepeatedCompositeFieldContainer[RunUpdate]
    def __init__(self, responses: _Optional[_Iterable[_Union[FunctionResponse, _Mapping]]] = ..., skips: _Optional[_Iterable[_Union[Skip, _Mapping]]] = ..., notes: _Optional[_Iterable[_Union[Note, _Mapping]]] = ..., runs: _Optional[_Iterable[_Union[RunUpdate, _Mapping]]] = ...) -> None: ...

class FunctionResponse(_message.Message):
    __slots__ = ("call_id", "name", "payload", "job_id", "interim", "seq")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    INTERIM_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    name: str
    payload: _struct_pb2.Struct
    job_id: str
    interim: bool
    seq: int
    def __init__(self, call_id: _Optional[str] = ..., name: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., job_id: _Optional[str] = ..., interim: bool = ..., seq: _Optional[int] = ...) -> None: ...

class Skip(_message.Message):
    __slots__ = ("call_id", "name", "reason", "job_id", "seq")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    name: str
    reason: str
    job_id: str
    seq: int
    def __init__(self, call_id: _Optional[str] = ..., name: _Optional[str] = ..., reason: _Optional[str] = ..., job_id: _Optional[str] = ..., seq: _Optional[int] = ...) -> None: ...

class Note(_message.Message):
    __slots__ = ("job_id", "text", "deliver", "via", "call_id", "scheduling", "why", "run_id", "seq")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    DELIVER_FIELD_NUMBER: _ClassVar[int]
    VIA_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    SCHEDULING_FIELD_NUMBER: _ClassVar[int]
    WHY_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    text: str
    deliver: Delivery
    via: NoteVia
    call_id: str
    scheduling: Scheduling
    why: str
    run_id: str
    seq: int
    def __init__(self, job_id: _Optional[str] = ..., text: _Optional[str] = ..., deliver: _Optional[_Union[Delivery, str]] = ..., via: _Optional[_Union[NoteVia, str]] = ..., call_id: _Optional[str] = ..., scheduling: _Optional[_Union[Scheduling, str]] = ..., why: _Optional[str] = ..., run_id: _Optional[str] = ..., seq: _Optional[int] = ...) -> None: ...

class GetHistoryRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetHistoryResponse(_message.Message):
    __slots__ = ("session_id", "epoch", "created_at", "record", "max_bytes", "bytes", "dropped", "first_seq", "complete", "entries", "policy_digest", "server_policy_digest", "policy")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    POLICY_DIGEST_FIELD_NUMBER: _ClassVar[int]
    SERVER_POLICY_DIGEST_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    epoch: str
    created_at: _timestamp_pb2.Timestamp
    record: bool
    max_bytes: int
    bytes: int
    dropped: int
    first_seq: int
    complete: bool
    entries: _containers.RepeatedCompositeFieldContainer[HistoryEntry]
    policy_digest: str
    server_policy_digest: str
    policy: _struct_pb2.Struct
    def __init__(self, session_id: _Optional[str] = ..., epoch: _Optional[str] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., record: bool = ..., max_bytes: _Optional[int] = ..., bytes: _Optional[int] = ..., dropped: _Optional[int] = ..., first_seq: _Optional[int] = ..., complete: bool = ..., entries: _Optional[_Iterable[_Union[HistoryEntry, _Mapping]]] = ..., policy_digest: _Optional[str] = ..., server_policy_digest: _Optional[str] = ..., policy: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class HistoryEntry(_message.Message):
    __slots__ = ("t_ms", "at", "observed_ms", "seq", "clipped", "call", "speech", "transcript", "withdraw", "prepared", "complete", "configure", "connect", "progress", "close", "decision", "revoked", "hold", "answered", "response", "skip", "note", "run")
    T_MS_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_MS_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    CLIPPED_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    SPEECH_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_FIELD_NUMBER: _ClassVar[int]
    WITHDRAW_FIELD_NUMBER: _ClassVar[int]
    PREPARED_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    CONFIGURE_FIELD_NUMBER: _ClassVar[int]
    CONNECT_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    CLOSE_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    HOLD_FIELD_NUMBER: _ClassVar[int]
    ANSWERED_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    SKIP_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    t_ms: int
    at: _timestamp_pb2.Timestamp
    observed_ms: int
    seq: int
    clipped: bool
    call: HistoryCall
    speech: HistorySpeech
    transcript: HistoryTranscript
    withdraw: HistoryWithdraw
    prepared: HistoryJob
    complete: HistoryComplete
    configure: HistoryConfigure
    connect: HistoryConnect
    progress: HistoryProgress
    close: HistoryClose
    decision: HistoryDecision
    revoked: HistoryJob
    hold: HistoryHold
    answered: HistoryJob
    response: FunctionResponse
    skip: Skip
    note: Note
    run: RunUpdate
    def __init__(self, t_ms: _Optional[int] = ..., at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., observed_ms: _Optional[int] = ..., seq: _Optional[int] = ..., clipped: bool = ..., call: _Optional[_Union[HistoryCall, _Mapping]] = ..., speech: _Optional[_Union[HistorySpeech, _Mapping]] = ..., transcript: _Optional[_Union[HistoryTranscript, _Mapping]] = ..., withdraw: _Optional[_Union[HistoryWithdraw, _Mapping]] = ..., prepared: _Optional[_Union[HistoryJob, _Mapping]] = ..., complete: _Optional[_Union[HistoryComplete, _Mapping]] = ..., configure: _Optional[_Union[HistoryConfigure, _Mapping]] = ..., connect: _Optional[_Union[HistoryConnect, _Mapping]] = ..., progress: _Optional[_Union[HistoryProgress, _Mapping]] = ..., close: _Optional[_Union[HistoryClose, _Mapping]] = ..., decision: _Optional[_Union[HistoryDecision, _Mapping]] = ..., revoked: _Optional[_Union[HistoryJob, _Mapping]] = ..., hold: _Optional[_Union[HistoryHold, _Mapping]] = ..., answered: _Optional[_Union[HistoryJob, _Mapping]] = ..., response: _Optional[_Union[FunctionResponse, _Mapping]] = ..., skip: _Optional[_Union[Skip, _Mapping]] = ..., note: _Optional[_Union[Note, _Mapping]] = ..., run: _Optional[_Union[RunUpdate, _Mapping]] = ...) -> None: ...

class HistoryCall(_message.Message):
    __slots__ = ("call_id", "minted", "tool", "args", "raw_args", "behavior", "tool_choice", "business_key", "disposition", "job_id", "run_id", "duplicate_of", "job_tool", "side_effect")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    MINTED_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    RAW_ARGS_FIELD_NUMBER: _ClassVar[int]
    BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    TOOL_CHOICE_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_KEY_FIELD_NUMBER: _ClassVar[int]
    DISPOSITION_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_OF_FIELD_NUMBER: _ClassVar[int]
    JOB_TOOL_FIELD_NUMBER: _ClassVar[int]
    SIDE_EFFECT_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    minted: bool
    tool: str
    args: _struct_pb2.Struct
    raw_args: str
    behavior: Behavior
    tool_choice: ToolChoice
    business_key: str
    disposition: Disposition
    job_id: str
    run_id: str
    duplicate_of: str
    job_tool: str
    side_effect: bool
    def __init__(self, call_id: _Optional[str] = ..., minted: bool = ..., tool: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., raw_args: _Optional[str] = ..., behavior: _Optional[_Union[Behavior, str]] = ..., tool_choice: _Optional[_Union[ToolChoice, str]] = ..., business_key: _Optional[str] = ..., disposition: _Optional[_Union[Disposition, str]] = ..., job_id: _Optional[str] = ..., run_id: _Optional[str] = ..., duplicate_of: _Optional[str] = ..., job_tool: _Optional[str] = ..., side_effect: bool = ...) -> None: ...

class HistorySpeech(_message.Message):
    __slots__ = ("event", "utterance_id", "utterance")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_ID_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_FIELD_NUMBER: _ClassVar[int]
    event: SpeechEvent
    utterance_id: str
    utterance: int
    def __init__(self, event: _Optional[_Union[SpeechEvent, str]] = ..., utterance_id: _Optional[str] = ..., utterance: _Optional[int] = ...) -> None: ...

class HistoryTranscript(_message.Message):
    __slots__ = ("role", "text", "interim", "utterance_id", "utterance", "intent", "discarded", "reading")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    INTERIM_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_ID_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_FIELD_NUMBER: _ClassVar[int]
    INTENT_FIELD_NUMBER: _ClassVar[int]
    DISCARDED_FIELD_NUMBER: _ClassVar[int]
    READING_FIELD_NUMBER: _ClassVar[int]
    role: Role
    text: str
    interim: bool
    utterance_id: str
    utterance: int
    intent: str
    discarded: str
    reading: AgentReading
    def __init__(self, role: _Optional[_Union[Role, str]] = ..., text: _Optional[str] = ..., interim: bool = ..., utterance_id: _Optional[str] = ..., utterance: _Optional[int] = ..., intent: _Optional[str] = ..., discarded: _Optional[str] = ..., reading: _Optional[_Union[AgentReading, _Mapping]] = ...) -> None: ...

class HistoryWithdraw(_message.Message):
    __slots__ = ("call_ids", "reason")
    CALL_IDS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    call_ids: _containers.RepeatedScalarFieldContainer[str]
    reason: CancellationReason
    def __init__(self, call_ids: _Optional[_Iterable[str]] = ..., reason: _Optional[_Union[CancellationReason, str]] = ...) -> None: ...

class HistoryJob(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class HistoryComplete(_message.Message):
    __slots__ = ("job_id", "outcome", "result", "error", "result_omitted")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RESULT_OMITTED_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    outcome: Outcome
    result: _struct_pb2.Struct
    error: str
    result_omitted: _struct_pb2.Struct
    def __init__(self, job_id: _Optional[str] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., error: _Optional[str] = ..., result_omitted: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class HistoryConfigure(_message.Message):
    __slots__ = ("language", "response_scheduling", "record", "time_zone")
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_SCHEDULING_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    language: str
    response_scheduling: bool
    record: bool
    time_zone: str
    def __init__(self, language: _Optional[str] = ..., response_scheduling: bool = ..., record: bool = ..., time_zone: _Optional[str] = ...) -> None: ...

class HistoryConnect(_message.Message):
    __slots__ = ("connection_id", "state")
    CONNECTION_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    connection_id: str
    state: SessionState
    def __init__(self, connection_id: _Optional[str] = ..., state: _Optional[_Union[SessionState, str]] = ...) -> None: ...

class HistoryProgress(_message.Message):
    __slots__ = ("job_id", "result")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    result: _struct_pb2.Struct
    def __init__(self, job_id: _Optional[str] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class HistoryClose(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class HistoryDecision(_message.Message):
    __slots__ = ("job_id", "decision", "cause", "reason")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    decision: Decision
    cause: str
    reason: str
    def __init__(self, job_id: _Optional[str] = ..., decision: _Optional[_Union[Decision, str]] = ..., cause: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class HistoryHold(_message.Message):
    __slots__ = ("job_id", "utterance", "abandoned", "end")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    UTTERANCE_FIELD_NUMBER: _ClassVar[int]
    ABANDONED_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    utterance: int
    abandoned: bool
    end: bool
    def __init__(self, job_id: _Optional[str] = ..., utterance: _Optional[int] = ..., abandoned: bool = ..., end: bool = ...) -> None: ...
