//! The in-memory index of a session: user messages and the surface fold,
//! built line by line from the file and extended by our own appends. No raw
//! line is kept.

use serde_json::Value;
use std::collections::HashMap;

use super::surface::{FoldOutcome, SurfaceFold, SurfaceOp};
use super::wire::{self, EventLine, LineEnvelope, ToolResultLine, UserMessageLine};
use super::{MAX_LINE_BYTES, SessionHeader};

/// The event types that carry a `surfaceOp` and may join the surface.
const MESSAGE_EVENT_TYPES: [&str; 3] = ["user/message", "assistant/message", "tool/result"];

/// The largest seq read: JavaScript's largest exact integer (2^53 - 1), all
/// DeepSeek Harness can write. It also keeps `next_seq` far from overflowing.
const MAX_SEQ: u64 = (1 << 53) - 1;

/// The event type indexed for the plugin.
pub(super) const USER_MESSAGE: &str = "user/message";

/// The other user-role message the plugin may read: a tool's result, whose
/// `data.message` is the message. Only a result whose source names the
/// plugin `dsh-tool-skill` is indexed (its record of a skill load), so an
/// ordinary conversation's tool calls cost the index nothing, leave the
/// history version alone, and stay out of the plugin's reach.
pub(super) const TOOL_RESULT: &str = "tool/result";

/// Whether a tool result's source is the skill plugin's record of its own
/// tool's call (the only tool results indexed).
fn names_the_plugin(source: &Value) -> bool {
    source.get("plugin").and_then(Value::as_str) == Some(skill_rules::PLUGIN_NAME)
}

/// Whether events of `kind` are indexed as user-role messages.
pub(super) fn is_user_role(kind: &str) -> bool {
    kind == USER_MESSAGE || kind == TOOL_RESULT
}

fn is_message_type(kind: &str) -> bool {
    MESSAGE_EVENT_TYPES.contains(&kind)
}

/// The surface marker an event to append asks for.
pub(super) enum OpRequest {
    /// No marker (a log-only event).
    None,
    /// This marker, checked against the surface at write time.
    Given(SurfaceOp),
    /// Replace whatever the surface holds when the write happens (or append
    /// if it is empty): compaction must cover nodes another process appended
    /// after this log was read.
    WholeSurface,
}

/// One event to append.
pub(super) struct EventRequest {
    pub kind: String,
    pub data: Value,
    pub op: OpRequest,
}

/// Why a batch cannot be written.
pub(super) enum PlanError {
    /// The event itself is malformed.
    Invalid { event_type: String, reason: String },
    /// A replacement does not fit the current surface.
    BadRange { start: u64, end: u64, reason: String },
}

/// One event of a planned batch, with its marker resolved.
struct PlannedEvent {
    seq: u64,
    kind: String,
    data: Value,
    op: Option<SurfaceOp>,
    /// Where its line lies in the batch's bytes.
    line: LineSpan,
}

/// A line's place: its first byte and its length including the `\n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LineSpan {
    pub offset: u64,
    pub len: u64,
}

/// Where an indexed user message's source and content are.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Body {
    /// A line of the session file, read again when asked for, so the index
    /// never holds message text and its size follows the number of user
    /// messages, not the bytes they carry.
    InFile(LineSpan),
    /// Held here: the messages of a session that lives only in memory.
    Held(Box<(Value, Vec<Value>)>),
}

/// One user message in the index: its seq, the two source fields readers
/// filter on (interned), and where the rest is.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct IndexedMessage {
    pub seq: u64,
    kind: Symbol,
    plugin: Option<Symbol>,
    pub body: Body,
}

/// An interned string of a [`Symbols`] table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Symbol(u32);

/// Source kinds and plugin names, each stored once however many messages
/// carry it.
#[derive(Default)]
struct Symbols {
    ids: HashMap<Box<str>, Symbol>,
    names: Vec<Box<str>>,
}

impl Symbols {
    fn intern(&mut self, name: &str) -> Symbol {
        if let Some(&symbol) = self.ids.get(name) {
            return symbol;
        }
        // More distinct names than u32 can count would need a 4-billion-line
        // file of unique sources; they share the last symbol rather than panic.
        let symbol = Symbol(u32::try_from(self.names.len()).unwrap_or(u32::MAX));
        self.names.push(name.into());
        self.ids.insert(name.into(), symbol);
        symbol
    }

    fn name(&self, symbol: Symbol) -> &str {
        self.names.get(symbol.0 as usize).map_or("", |name| name)
    }
}

/// The `kind` and `plugin` strings of a message's source (`""` and `None`
/// when absent or not strings).
fn source_keys(source: &Value) -> (&str, Option<&str>) {
    let kind = source.get("kind").and_then(Value::as_str).unwrap_or_default();
    (kind, source.get("plugin").and_then(Value::as_str))
}

/// Serialized events ready to be written, with everything needed to update
/// the index once the write succeeded.
pub(super) struct PlannedBatch {
    /// The event lines, each ending in `\n`.
    pub bytes: Vec<u8>,
    events: Vec<PlannedEvent>,
    /// The surface after the batch, when it holds a replacement (appends
    /// alone are replayed on commit instead of cloning the surface).
    surface: Option<SurfaceFold>,
}

impl PlannedBatch {
    /// The number of event lines in `bytes`.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Refuses the batch when one of its lines is longer than `limit` bytes
    /// without its newline: a reader would skip that line, so the host must
    /// not write it. (`limit` is [`MAX_LINE_BYTES`] except in tests.)
    pub fn check_line_lengths(&self, limit: u64) -> Result<(), PlanError> {
        for event in &self.events {
            if let Some(reason) = line_too_long(event.line.len - 1, limit) {
                return Err(PlanError::Invalid { event_type: event.kind.clone(), reason });
            }
        }
        Ok(())
    }
}

/// Why a line of `len` bytes (without its newline) cannot be written, when
/// it is longer than `limit`.
pub(super) fn line_too_long(len: u64, limit: u64) -> Option<String> {
    const MIB: u64 = 1024 * 1024;
    let limit_text = if limit.is_multiple_of(MIB) {
        format!("{} MiB ({limit} bytes)", limit / MIB)
    } else {
        format!("{limit} bytes")
    };
    (len > limit).then(|| format!("the line would be {len} bytes, over the {limit_text} a session line may have"))
}

/// The most warnings kept (a file of garbage would otherwise keep one per
/// line); the rest are counted.
const MAX_WARNINGS: usize = 100;

/// User messages, the surface, and the bookkeeping that keeps seqs unique.
#[derive(Default)]
pub(super) struct SessionIndex {
    pub warnings: Vec<String>,
    /// Warnings past [`MAX_WARNINGS`], counted instead of kept.
    unlisted_warnings: u64,
    pub user_messages: Vec<IndexedMessage>,
    symbols: Symbols,
    /// Positions in `user_messages` per source `kind`, ascending, so a reader
    /// that wants only catalogs never walks the whole conversation.
    pub by_kind: HashMap<String, Vec<usize>>,
    /// Bumped by every user message and every replacement of surface nodes:
    /// the only changes that alter the user-message history or its visibility.
    pub history_version: u64,
    pub surface: SurfaceFold,
    last_seq: Option<u64>,
    /// Lines that parsed as JSON objects; a file with none is not a log.
    pub readable_lines: u64,
    /// `time` of the first readable line, for a synthetic header's `createdAt`.
    pub first_event_time: Option<i64>,
}

impl SessionIndex {
    /// Indexes a user message (its seq is above every seq before it).
    fn push_user_message(&mut self, seq: u64, source: &Value, body: Body) {
        let (kind, plugin) = source_keys(source);
        self.by_kind.entry(kind.to_owned()).or_default().push(self.user_messages.len());
        let (kind, plugin) = (self.symbols.intern(kind), plugin.map(|plugin| self.symbols.intern(plugin)));
        self.history_version += 1;
        self.user_messages.push(IndexedMessage { seq, kind, plugin, body });
    }

    /// A message's source `kind` and `plugin`.
    pub fn keys(&self, message: &IndexedMessage) -> (&str, Option<&str>) {
        (self.symbols.name(message.kind), message.plugin.map(|plugin| self.symbols.name(plugin)))
    }

    /// The indexed message with this seq. O(log n).
    pub fn find(&self, seq: u64) -> Option<&IndexedMessage> {
        let messages = &self.user_messages;
        messages.binary_search_by_key(&seq, |message| message.seq).ok().map(|position| &messages[position])
    }

    /// The seq the next appended event gets.
    pub fn next_seq(&self) -> u64 {
        self.last_seq.map_or(0, |seq| seq + 1)
    }

    fn warn(&mut self, line_no: u64, message: impl std::fmt::Display) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(format!("line {line_no}: {message}"));
        } else {
            self.unlisted_warnings += 1;
        }
    }

    /// Ends the list of warnings after a read: past [`MAX_WARNINGS`], one
    /// last entry counts the ones not listed.
    pub fn count_unlisted_warnings(&mut self) {
        if self.unlisted_warnings > 0 {
            self.warnings.truncate(MAX_WARNINGS);
            self.warnings.push(format!("… and {} more lines with a warning, not listed", self.unlisted_warnings));
        }
    }

    /// Records a line skipped unread for its length.
    pub fn skip_long_line(&mut self, line_no: u64, length: u64, cap: u64) {
        self.warn(line_no, format_args!("skipped: {length} bytes long, over the {cap} bytes a line may have"));
    }

    /// Folds one line of the file into the index. Returns the header when
    /// this is the first readable line and a header, and an error only for a
    /// header that cannot be used; every other problem is a warning and the
    /// line is skipped (it stays in the file).
    pub fn ingest_line(
        &mut self,
        line_no: u64,
        span: LineSpan,
        line: &[u8],
        terminated: bool,
    ) -> Result<Option<SessionHeader>, String> {
        let text = line.trim_ascii();
        if text.is_empty() {
            return Ok(None);
        }
        let torn = if terminated { "" } else { " (the file's last line has no newline: a torn write?)" };
        // serde's derived Deserialize would also accept a JSON array.
        if text.first() != Some(&b'{') {
            self.warn(line_no, format_args!("skipped: not a JSON object{torn}"));
            return Ok(None);
        }
        let envelope: LineEnvelope = match wire::from_line(text) {
            Ok(envelope) => envelope,
            Err(error) => {
                self.warn(line_no, format_args!("skipped: unreadable JSON ({error}){torn}"));
                return Ok(None);
            }
        };
        self.readable_lines += 1;
        // The first readable line's time, whatever the line is: appends never
        // change it, so a file without a header keeps one synthetic
        // `createdAt` however much is appended.
        if self.readable_lines == 1 {
            self.first_event_time = envelope.time.as_ref().and_then(Value::as_i64);
        }
        let Some(kind) = envelope.kind.as_deref() else {
            self.warn(line_no, "skipped: no \"type\"");
            return Ok(None);
        };
        if kind == "session" {
            // The header is the first readable line (normally line 1; a
            // blank or torn line before it does not demote it).
            if self.readable_lines == 1 {
                return wire::parse_header(&envelope).map(Some);
            }
            self.warn(line_no, "skipped: a session header after the first line");
            return Ok(None);
        }
        let seq = match &envelope.seq {
            Some(value) => match value.as_u64() {
                Some(seq) if seq > MAX_SEQ => {
                    self.warn(
                        line_no,
                        format_args!(
                            "skipped {kind}: seq {seq} is above {MAX_SEQ}, the largest DeepSeek Harness can write"
                        ),
                    );
                    return Ok(None);
                }
                Some(seq) => seq,
                None => {
                    self.warn(line_no, format_args!("skipped {kind}: seq {value} is not a non-negative integer"));
                    return Ok(None);
                }
            },
            None => {
                self.warn(line_no, format_args!("skipped {kind}: no seq"));
                return Ok(None);
            }
        };
        if let Some(last) = self.last_seq
            && seq <= last
        {
            // Keeping seqs strictly increasing keeps user_messages sorted and
            // the surface fold well defined.
            let why = if seq == last { "a duplicate of" } else { "older than" };
            self.warn(line_no, format_args!("ignored {kind}: seq {seq} is {why} seq {last} read before it"));
            return Ok(None);
        }
        self.last_seq = Some(seq);
        if kind == USER_MESSAGE {
            match wire::from_line::<UserMessageLine>(text) {
                Ok(UserMessageLine { data, .. }) => self.push_user_message(seq, &data.source, Body::InFile(span)),
                Err(error) => self.warn(
                    line_no,
                    format_args!("user message seq {seq} not indexed: its data has no content list ({error})"),
                ),
            }
        } else if kind == TOOL_RESULT {
            // Only its source is parsed here (the content is skipped unbuilt);
            // one without a readable message is left out quietly.
            if let Ok(ToolResultLine { data, .. }) = wire::from_line::<ToolResultLine>(text)
                && names_the_plugin(&data.message.source)
                && wire::from_line::<wire::ToolResultMessageLine>(text).is_ok()
            {
                self.push_user_message(seq, &data.message.source, Body::InFile(span));
            }
        }
        self.fold_marker(line_no, kind, seq, envelope.surface_op.as_ref());
        Ok(None)
    }

    fn fold_marker(&mut self, line_no: u64, kind: &str, seq: u64, marker: Option<&Value>) {
        let op = match (is_message_type(kind), marker) {
            // A message without a marker is log-only: it never reaches the
            // model. (DeepSeek Harness always writes one; this host records
            // `skill-host load` results that way.)
            (_, None) => return,
            (false, Some(_)) => {
                self.warn(line_no, format_args!("{kind} seq {seq} cannot carry a surfaceOp; ignored"));
                return;
            }
            (true, Some(marker)) => match wire::parse_surface_op(marker) {
                Some(op) => op,
                None => {
                    self.warn(
                        line_no,
                        format_args!("{kind} seq {seq} has an invalid surfaceOp {marker}; it stays off the surface"),
                    );
                    return;
                }
            },
        };
        let outcome = self.surface.apply(seq, op);
        let SurfaceOp::Replace { start, end } = op else {
            return;
        };
        self.history_version += 1;
        match outcome {
            FoldOutcome::Appended | FoldOutcome::Replaced { .. } => {}
            FoldOutcome::ReplacedBySeqRange { shadowed } => self.warn(
                line_no,
                format_args!(
                    "seq {seq} replaces {start}..={end}, whose ends are not both on the surface in that order; hid the {} surface node(s) with seqs in that range instead",
                    shadowed.len()
                ),
            ),
            FoldOutcome::NothingToReplace => self.warn(
                line_no,
                format_args!("seq {seq} replaces {start}..={end}, but no surface node lies in that range; appended it at the end"),
            ),
        }
    }

    /// Assigns seqs and serializes a batch against the current surface,
    /// without changing the index. A line too long to be read back is an
    /// error.
    pub fn plan(&self, requests: Vec<EventRequest>, time: i64) -> Result<PlannedBatch, PlanError> {
        let last = self.next_seq().saturating_add(requests.len() as u64).saturating_sub(1);
        if let Some(first) = requests.first()
            && last > MAX_SEQ
        {
            return Err(PlanError::Invalid {
                event_type: first.kind.clone(),
                reason: format!("its seq {last} would be above {MAX_SEQ}, the largest DeepSeek Harness can read"),
            });
        }
        let mut bytes = Vec::new();
        let mut events: Vec<PlannedEvent> = Vec::with_capacity(requests.len());
        let mut staged: Option<SurfaceFold> = None;
        for (seq, request) in (self.next_seq()..).zip(requests) {
            let needs_surface =
                matches!(request.op, OpRequest::WholeSurface | OpRequest::Given(SurfaceOp::Replace { .. }));
            if needs_surface && staged.is_none() {
                staged = Some(self.staged_surface(&events));
            }
            let op = match request.op {
                OpRequest::None => None,
                OpRequest::Given(op) => Some(op),
                OpRequest::WholeSurface => {
                    Some(staged.as_ref().and_then(SurfaceFold::whole_range).unwrap_or(SurfaceOp::Append))
                }
            };
            let mut shadowed = None;
            if let (Some(SurfaceOp::Replace { start, end }), Some(surface)) = (op, staged.as_mut()) {
                let hidden = surface.shadowed_by(start, end).ok_or_else(|| bad_range(surface, start, end))?.to_vec();
                surface.apply(seq, SurfaceOp::Replace { start, end });
                shadowed = Some(hidden);
            } else if let (Some(surface), Some(op)) = (staged.as_mut(), op) {
                surface.apply(seq, op);
            }
            let start = bytes.len() as u64;
            let line = EventLine {
                kind: &request.kind,
                seq,
                time,
                data: &request.data,
                surface_op: op,
                source_event_seqs: shadowed.as_deref(),
            };
            serde_json::to_writer(&mut bytes, &line).map_err(|error| PlanError::Invalid {
                event_type: request.kind.clone(),
                reason: format!("cannot serialize it: {error}"),
            })?;
            bytes.push(b'\n');
            let line = LineSpan { offset: start, len: bytes.len() as u64 - start };
            events.push(PlannedEvent { seq, kind: request.kind, data: request.data, op, line });
        }
        let batch = PlannedBatch { bytes, events, surface: staged };
        batch.check_line_lengths(MAX_LINE_BYTES)?;
        Ok(batch)
    }

    /// A copy of the surface with the batch's earlier events folded in, so a
    /// replacement sees them. Cloning happens only for batches that replace.
    fn staged_surface(&self, earlier: &[PlannedEvent]) -> SurfaceFold {
        let mut copy = self.surface.clone();
        for event in earlier {
            if let Some(op) = event.op {
                copy.apply(event.seq, op);
            }
        }
        copy
    }

    /// Adds a batch that was durably written (its bytes starting at file
    /// offset `written_at`) or, in memory (`None`), accepted, and returns its
    /// seqs.
    pub fn commit(&mut self, batch: PlannedBatch, written_at: Option<u64>) -> Vec<u64> {
        let replay_appends = batch.surface.is_none();
        if let Some(surface) = batch.surface {
            self.surface = surface;
            self.history_version += 1;
        }
        let mut seqs = Vec::with_capacity(batch.events.len());
        for event in batch.events {
            if let (true, Some(op)) = (replay_appends, event.op) {
                self.surface.apply(event.seq, op);
            }
            let message = match event.kind.as_str() {
                USER_MESSAGE => Some(event.data),
                TOOL_RESULT => match event.data {
                    // The rule of `ingest_line`, so a new reader indexes what this one did.
                    Value::Object(mut data) => data.remove("message").filter(|message| {
                        message.get("source").is_some_and(names_the_plugin)
                            && message.get("content").is_some_and(Value::is_array)
                    }),
                    _ => None,
                },
                _ => None,
            };
            if let Some(message) = message {
                let (source, content) = user_message_parts(message);
                let body = match written_at {
                    Some(base) => Body::InFile(LineSpan { offset: base + event.line.offset, len: event.line.len }),
                    None => Body::Held(Box::new((source.clone(), content))),
                };
                self.push_user_message(event.seq, &source, body);
            }
            self.last_seq = Some(event.seq);
            seqs.push(event.seq);
        }
        seqs
    }
}

/// Checks what can be checked without the surface: the type, that only a
/// message carries a marker, and a user message's data shape.
pub(super) fn validate(request: &EventRequest) -> Result<(), String> {
    let kind = request.kind.as_str();
    if kind.is_empty() || kind == "session" {
        return Err("not an event type".to_owned());
    }
    let has_op = !matches!(request.op, OpRequest::None);
    if has_op && !is_message_type(kind) {
        return Err(format!("only {} events carry a surfaceOp", MESSAGE_EVENT_TYPES.join(", ")));
    }
    if kind == USER_MESSAGE {
        let Some(data) = request.data.as_object() else {
            return Err("data must be a user-message object".to_owned());
        };
        if !data.get("content").is_some_and(Value::is_array) {
            return Err("data.content must be a list of content blocks".to_owned());
        }
    }
    Ok(())
}

fn bad_range(surface: &SurfaceFold, start: u64, end: u64) -> PlanError {
    let reason = match (surface.contains(start), surface.contains(end)) {
        (false, _) => format!("seq {start} is not on the surface"),
        (true, false) => format!("seq {end} is not on the surface"),
        (true, true) => format!("seq {start} comes after seq {end} on the surface"),
    };
    PlanError::BadRange { start, end, reason }
}

fn user_message_parts(data: Value) -> (Value, Vec<Value>) {
    let Value::Object(mut data) = data else {
        return (Value::Null, Vec::new());
    };
    let source = data.remove("source").unwrap_or(Value::Null);
    let content = match data.remove("content") {
        Some(Value::Array(blocks)) => blocks,
        _ => Vec::new(),
    };
    (source, content)
}
