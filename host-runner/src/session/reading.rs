//! Reading the session file: the lines after the log's cursor folded into
//! the index, and a user message read back from the line that held it.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::file::open_to_read;
use super::index::{self, LineSpan, SessionIndex};
use super::{FileCursor, MAX_LINE_BYTES, SessionError, SessionHeader, UserMessageEvent, wire};

/// Folds every line after the cursor into the index, streaming, and adopts
/// the header if the first readable line is one. Returns whether it found one.
pub(super) fn read_new_lines(
    cursor: &mut FileCursor,
    index: &mut SessionIndex,
    header: &mut SessionHeader,
    file: &File,
) -> Result<bool, SessionError> {
    let path = cursor.path.as_path();
    let length = file.metadata().map_err(|e| SessionError::io(path, "reading the length", e))?.len();
    if length < cursor.offset {
        return Err(SessionError::Shrunk { path: path.to_path_buf(), read: cursor.offset, found: length });
    }
    if length == cursor.offset {
        return Ok(false);
    }
    let mut reader = BufReader::with_capacity(1 << 16, file);
    reader.seek(SeekFrom::Start(cursor.offset)).map_err(|e| SessionError::io(path, "seeking", e))?;
    let mut line = Vec::new();
    let mut header_read = false;
    loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| SessionError::io(path, "reading", e))?;
        if read == 0 {
            break;
        }
        // A chunk after an unterminated line continues that line.
        if cursor.ends_with_newline {
            cursor.lines += 1;
        }
        if line.len() as u64 > MAX_LINE_BYTES && line.last() != Some(&b'\n') {
            let (rest, terminated) = skip_line(&mut reader).map_err(|e| SessionError::io(path, "reading", e))?;
            let length = read as u64 + rest;
            cursor.offset += length;
            cursor.ends_with_newline = terminated;
            index.skip_long_line(cursor.lines, length, MAX_LINE_BYTES);
            continue;
        }
        let span = LineSpan { offset: cursor.offset, len: read as u64 };
        cursor.offset += read as u64;
        cursor.ends_with_newline = line.last() == Some(&b'\n');
        let found = index
            .ingest_line(cursor.lines, span, &line, cursor.ends_with_newline)
            .map_err(|reason| SessionError::BadHeader { path: path.to_path_buf(), reason })?;
        if let Some(found) = found {
            *header = found;
            header_read = true;
        }
    }
    index.count_unlisted_warnings();
    Ok(header_read)
}

/// Reads past the rest of a line without keeping it: the bytes read, and
/// whether a newline ended them.
fn skip_line(reader: &mut impl BufRead) -> io::Result<(u64, bool)> {
    let mut skipped = 0;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok((skipped, false));
        }
        let (length, terminated) = match available.iter().position(|&byte| byte == b'\n') {
            Some(end) => (end + 1, true),
            None => (available.len(), false),
        };
        reader.consume(length);
        skipped += length as u64;
        if terminated {
            return Ok((skipped, true));
        }
    }
}

/// Reads the user message with `seq` back from the line at `span`, which
/// held it when the file was indexed.
pub(super) fn read_user_message(path: &Path, seq: u64, span: LineSpan) -> Result<UserMessageEvent, SessionError> {
    let changed = |reason: String| SessionError::Changed { path: path.to_path_buf(), seq, offset: span.offset, reason };
    let mut file = open_to_read(path, "reopening")?;
    file.seek(SeekFrom::Start(span.offset)).map_err(|e| SessionError::io(path, "seeking", e))?;
    let mut line = Vec::new();
    file.take(span.len).read_to_end(&mut line).map_err(|e| SessionError::io(path, "reading", e))?;
    if line.len() as u64 != span.len {
        return Err(changed(format!("the file ends {} bytes into the line", line.len())));
    }
    let text = line.trim_ascii();
    let unreadable = |error: serde_json::Error| changed(format!("the line no longer reads ({error})"));
    let envelope: wire::LineEnvelope = wire::from_line(text).map_err(unreadable)?;
    let (kind, read_seq, data) = match envelope.kind.as_deref().unwrap_or_default() {
        index::TOOL_RESULT => {
            let read: wire::ToolResultMessageLine = wire::from_line(text).map_err(unreadable)?;
            (read.kind, read.seq, read.data.message)
        }
        _ => {
            let read: wire::UserMessageLine = wire::from_line(text).map_err(unreadable)?;
            (read.kind, read.seq, read.data)
        }
    };
    if !index::is_user_role(&kind) || read_seq != seq {
        return Err(changed(format!("the line now holds {kind} seq {read_seq}")));
    }
    Ok(UserMessageEvent { seq, source: data.source, content: data.content })
}
