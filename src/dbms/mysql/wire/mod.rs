//! A lean synchronous MySQL/MariaDB client for the client threads' connections: the binary
//! protocol of prepared statements over a blocking socket, with the handshake and
//! authentication packets of `mysql_common` (the protocol crate under `mysql`).
//!
//! Why not the `mysql` crate here: per statement it builds a `Params` vector, takes packet
//! buffers from a pool shared by every connection, and materializes every row as a `Row` of
//! `Value`s with their own allocations. Measured with `scripts/bench-client`, that put ibench's
//! client CPU per point select at sysbench's (see docs/PERFORMANCE.md). Here a statement is one
//! `send` and, usually, one `recv`; parameters are encoded straight into a reused buffer and
//! only the first column of a row is decoded, in place. The `mysql` crate still serves
//! everything off the hot path (settings, counters, maintenance).
//!
//! Supported: TCP and Unix sockets; `mysql_native_password` and `caching_sha2_password` (fast
//! path, and full authentication over a Unix socket or with the server's RSA key), as the
//! `mysql` crate does without TLS; no compression.

use std::io;
use std::net::TcpStream;
use std::os::unix::net::UnixStream;

use mysql::mysql_common::constants::{CapabilityFlags, ColumnType};

use crate::dbms::socket::Socket;
use packets::{
    binary_values, column_type, first_binary, first_text, put_lenenc, status, take_lenenc,
    text_values,
};

mod handshake;
mod packets;
use crate::dbms::{DbError, ErrorKind};

type Result<T> = std::result::Result<T, DbError>;

fn protocol_error(what: &str) -> DbError {
    DbError {
        kind: ErrorKind::ConnectionLost,
        message: format!("unexpected packet from the server: {what}"),
    }
}

/// A parameter of a prepared statement.
#[derive(Clone, Copy, Debug)]
pub enum Param<'a> {
    /// An integer (sent as BIGINT).
    Int(i64),
    /// A float (sent as DOUBLE).
    Double(f64),
    /// A string.
    Bytes(&'a [u8]),
}

/// The first column of a result row, decoded in place.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    /// SQL NULL.
    Null,
    /// An integer column (or an integer in text).
    Int(i64),
    /// Anything else, as sent (text protocol: always).
    Bytes(&'a [u8]),
    /// A FLOAT or DOUBLE column, where every column of a row is decoded.
    Double(f64),
}

impl Value<'_> {
    /// The value as an integer, if it is one (text included).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bytes(b) => std::str::from_utf8(b).ok()?.parse().ok(),
            Value::Null | Value::Double(_) => None,
        }
    }
}

/// What a statement without rows reports.
#[derive(Clone, Copy, Debug, Default)]
pub struct Done {
    /// Rows changed (or matched).
    pub affected_rows: u64,
    /// First id the statement's insert generated.
    pub last_insert_id: u64,
}

/// A prepared statement of one connection.
#[derive(Clone, Copy, Debug)]
pub struct Statement {
    id: u32,
    params: u16,
}

/// Largest payload of one packet; longer payloads continue in the next.
const MAX_PAYLOAD: usize = 0xFF_FFFF;
/// max_allowed_packet the client announces.
const MAX_PACKET: u32 = 64 << 20;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;
const COM_QUIT: u8 = 0x01;

/// One connection.
pub struct MyWire {
    socket: Socket,
    /// Bytes read and not yet parsed: `input[start..end]` (`input` is all buffer).
    input: Vec<u8>,
    start: usize,
    end: usize,
    /// The current packet's payload when it was continued over several packets (joined);
    /// otherwise it is `input[cur]`, read in place.
    packet: Vec<u8>,
    cur: std::ops::Range<usize>,
    joined: bool,
    /// The next packet's sequence id.
    seq: u8,
    /// The payload being written (a 4-byte header placeholder first).
    out: Vec<u8>,
    caps: CapabilityFlags,
    /// The column types of the result set being read, where every column is decoded.
    types: Vec<ColumnType>,
}

impl MyWire {
    /// Connects and authenticates with `opts` (host and port, or socket; user, password,
    /// database).
    pub fn connect(opts: &mysql::Opts) -> Result<Self> {
        let socket = match opts.get_socket() {
            Some(path) => Socket::unix(UnixStream::connect(path)?),
            None => {
                let s =
                    TcpStream::connect((opts.get_ip_or_hostname().as_ref(), opts.get_tcp_port()))?;
                s.set_nodelay(true)?;
                Socket::tcp(s)
            }
        };
        let unix = socket.is_unix();
        let mut c = MyWire {
            socket,
            input: vec![0; 16384],
            start: 0,
            end: 0,
            packet: Vec::new(),
            cur: 0..0,
            joined: false,
            seq: 0,
            out: Vec::with_capacity(1024),
            caps: CapabilityFlags::empty(),
            types: Vec::new(),
        };
        c.handshake(opts, unix)?;
        // What every connection runs first (the URL's session variables).
        for sql in opts.get_init() {
            c.query(&sql, |_| Ok(()))?;
        }
        Ok(c)
    }

    /// Starts a new payload in `out` (after room for the header).
    fn begin(&mut self) {
        self.out.clear();
        self.out.extend_from_slice(&[0; 4]);
    }

    /// Sends the payload in `out` as packets numbered from `seq`.
    fn send(&mut self, seq: u8) -> Result<()> {
        let len = self.out.len() - 4;
        if len < MAX_PAYLOAD {
            self.out[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
            self.out[3] = seq;
            self.seq = seq.wrapping_add(1);
            return Ok(self.socket.write_all(&self.out)?);
        }
        // Long payloads: chunks of MAX_PAYLOAD, then a shorter (possibly empty) one.
        let payload = self.out.split_off(4);
        let mut framed = Vec::with_capacity(payload.len() + 4 * (payload.len() / MAX_PAYLOAD + 1));
        let mut seq = seq;
        let mut chunks = payload.chunks(MAX_PAYLOAD).peekable();
        let mut last_len = 0;
        while let Some(chunk) = chunks.next() {
            framed.extend_from_slice(&(chunk.len() as u32).to_le_bytes()[..3]);
            framed.push(seq);
            framed.extend_from_slice(chunk);
            seq = seq.wrapping_add(1);
            last_len = chunk.len();
            if chunks.peek().is_none() && last_len == MAX_PAYLOAD {
                framed.extend_from_slice(&[0, 0, 0, seq]);
                seq = seq.wrapping_add(1);
            }
        }
        let _ = last_len;
        self.seq = seq;
        Ok(self.socket.write_all(&framed)?)
    }

    /// Makes at least `n` unparsed bytes available.
    fn fill(&mut self, n: usize) -> Result<()> {
        while self.end - self.start < n {
            if self.start == self.end {
                (self.start, self.end) = (0, 0);
            } else if self.start + n > self.input.len() {
                // Move the partial packet to the front; grow for a packet longer than all.
                self.input.copy_within(self.start..self.end, 0);
                (self.start, self.end) = (0, self.end - self.start);
                if n > self.input.len() {
                    self.input.resize(n.next_power_of_two(), 0);
                }
            }
            let got = loop {
                match self.socket.read(&mut self.input[self.end..]) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    other => break other?,
                }
            };
            if got == 0 {
                return Err(DbError {
                    kind: ErrorKind::ConnectionLost,
                    message: "the server closed the connection".to_string(),
                });
            }
            self.end += got;
        }
        Ok(())
    }

    /// The current packet's payload.
    fn packet(&self) -> &[u8] {
        if self.joined {
            &self.packet
        } else {
            &self.input[self.cur.clone()]
        }
    }

    /// Reads the next packet: in place in the input buffer (valid until the next read), or
    /// joined into `packet` when it continues over several packets (16 MiB and more).
    fn next_packet(&mut self) -> Result<()> {
        let mut joined = false;
        loop {
            self.fill(4)?;
            let h = &self.input[self.start..self.start + 4];
            let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
            self.seq = h[3].wrapping_add(1);
            self.fill(4 + len)?;
            let body = self.start + 4;
            self.start = body + len;
            if len < MAX_PAYLOAD && !joined {
                self.cur = body..body + len;
                self.joined = false;
                return Ok(());
            }
            if !joined {
                self.packet.clear();
                joined = true;
            }
            self.packet.extend_from_slice(&self.input[body..body + len]);
            if len < MAX_PAYLOAD {
                self.joined = true;
                return Ok(());
            }
        }
    }

    /// The server's error in the current packet (an ERR packet).
    fn server_error(&self) -> DbError {
        let p = self.packet();
        let code = p.get(1..3).map_or(0, |c| u16::from_le_bytes([c[0], c[1]]));
        let (state, msg) = if p.get(3) == Some(&b'#') && p.len() >= 9 {
            (String::from_utf8_lossy(&p[4..9]).into_owned(), &p[9..])
        } else {
            (String::new(), p.get(3..).unwrap_or(&[]))
        };
        let msg = String::from_utf8_lossy(msg);
        DbError {
            kind: kind_of_code(code),
            message: if state.is_empty() {
                format!("{msg} (error {code})")
            } else {
                format!("{msg} (error {code}, SQLSTATE {state})")
            },
        }
    }

    fn check_err(&self) -> Result<()> {
        if self.packet().first() == Some(&0xFF) {
            return Err(self.server_error());
        }
        Ok(())
    }

    /// Prepares `sql`.
    pub fn prepare(&mut self, sql: &str) -> Result<Statement> {
        self.begin();
        self.out.push(COM_STMT_PREPARE);
        self.out.extend_from_slice(sql.as_bytes());
        self.send(0)?;
        self.next_packet()?;
        self.check_err()?;
        let p = self.packet();
        if p.len() < 12 || p[0] != 0 {
            return Err(protocol_error("after COM_STMT_PREPARE"));
        }
        let stmt = Statement {
            id: u32::from_le_bytes([p[1], p[2], p[3], p[4]]),
            params: u16::from_le_bytes([p[7], p[8]]),
        };
        let columns = u16::from_le_bytes([p[5], p[6]]);
        // Parameter and column definitions, each list closed by an EOF packet.
        for n in [stmt.params, columns] {
            if n > 0 {
                for _ in 0..=n {
                    self.next_packet()?;
                }
            }
        }
        Ok(stmt)
    }

    /// Runs `stmt` with `n` parameters, parameter `i` given by `param(i)` (called twice per
    /// parameter: for its type, then for its value), calling `row` with the first column of
    /// each row; returns what the statement reports. Nothing is allocated: the values go
    /// straight into the connection's buffer.
    pub fn execute_with<'p>(
        &mut self,
        stmt: &Statement,
        n: usize,
        param: impl Fn(usize) -> Param<'p>,
        mut row: impl FnMut(Value<'_>) -> Result<()>,
    ) -> Result<Done> {
        self.send_execute(stmt, n, param)?;
        self.results(true, false, |_, v| row(v))
    }

    /// As [`MyWire::execute_with`], decoding every column of each row: `row(columns, value)`
    /// is called for each value of each row, in order.
    pub fn execute_all<'p>(
        &mut self,
        stmt: &Statement,
        n: usize,
        param: impl Fn(usize) -> Param<'p>,
        row: impl FnMut(usize, Value<'_>) -> Result<()>,
    ) -> Result<Done> {
        self.send_execute(stmt, n, param)?;
        self.results(true, true, row)
    }

    /// As [`MyWire::query`], decoding every column of each row (see [`MyWire::execute_all`]).
    pub fn query_all(
        &mut self,
        sql: &str,
        row: impl FnMut(usize, Value<'_>) -> Result<()>,
    ) -> Result<Done> {
        self.begin();
        self.out.push(COM_QUERY);
        self.out.extend_from_slice(sql.as_bytes());
        self.send(0)?;
        self.results(false, true, row)
    }

    /// Sends COM_STMT_EXECUTE of `stmt` with its `n` parameters.
    fn send_execute<'p>(
        &mut self,
        stmt: &Statement,
        n: usize,
        param: impl Fn(usize) -> Param<'p>,
    ) -> Result<()> {
        if n != usize::from(stmt.params) {
            return Err(DbError {
                kind: ErrorKind::Fatal,
                message: format!("statement takes {} parameters, {n} given", stmt.params),
            });
        }
        self.begin();
        let out = &mut self.out;
        out.push(COM_STMT_EXECUTE);
        out.extend_from_slice(&stmt.id.to_le_bytes());
        out.push(0); // no cursor
        out.extend_from_slice(&1u32.to_le_bytes()); // iteration count
        if n > 0 {
            out.extend(std::iter::repeat_n(0u8, n.div_ceil(8))); // no NULLs
            out.push(1); // types follow
            for i in 0..n {
                let ty = match param(i) {
                    Param::Int(_) => ColumnType::MYSQL_TYPE_LONGLONG,
                    Param::Double(_) => ColumnType::MYSQL_TYPE_DOUBLE,
                    Param::Bytes(_) => ColumnType::MYSQL_TYPE_VAR_STRING,
                };
                out.extend_from_slice(&[ty as u8, 0]);
            }
            for i in 0..n {
                match param(i) {
                    Param::Int(i) => out.extend_from_slice(&i.to_le_bytes()),
                    Param::Double(f) => out.extend_from_slice(&f.to_le_bytes()),
                    Param::Bytes(b) => {
                        put_lenenc(out, b.len() as u64);
                        out.extend_from_slice(b);
                    }
                }
            }
        }
        self.send(0)
    }

    /// Runs `sql` over the text protocol (several statements allowed), calling `row` with the
    /// first column of each row; returns what the last statement reports.
    pub fn query(
        &mut self,
        sql: &str,
        mut row: impl FnMut(Value<'_>) -> Result<()>,
    ) -> Result<Done> {
        self.begin();
        self.out.push(COM_QUERY);
        self.out.extend_from_slice(sql.as_bytes());
        self.send(0)?;
        self.results(false, false, |_, v| row(v))
    }

    /// Reads result sets until the server has no more; `binary` rows (prepared statements)
    /// or text rows.
    fn results(
        &mut self,
        binary: bool,
        all: bool,
        mut row: impl FnMut(usize, Value<'_>) -> Result<()>,
    ) -> Result<Done> {
        let mut done = Done::default();
        let mut failed = None;
        loop {
            self.next_packet()?;
            let more = match self.packet().first() {
                Some(0x00) => {
                    let mut p = &self.packet()[1..];
                    done.affected_rows = take_lenenc(&mut p).unwrap_or(0);
                    done.last_insert_id = take_lenenc(&mut p).unwrap_or(0);
                    status(p) & SERVER_MORE_RESULTS_EXISTS != 0
                }
                Some(0xFF) => return Err(failed.unwrap_or_else(|| self.server_error())),
                Some(0xFB) => return Err(protocol_error("LOCAL INFILE request")),
                _ => {
                    let columns = take_lenenc(&mut self.packet())
                        .ok_or_else(|| protocol_error("column count"))?
                        as usize;
                    self.types.clear();
                    for i in 0..columns {
                        self.next_packet()?;
                        if i == 0 || all {
                            let ty = column_type(self.packet())
                                .ok_or_else(|| protocol_error("column definition"))?;
                            self.types.push(ty);
                        }
                    }
                    self.next_packet()?; // EOF after the column definitions
                    self.rows(binary, all, columns, &mut failed, &mut row)?;
                    status(self.packet().get(3..).unwrap_or(&[])) & SERVER_MORE_RESULTS_EXISTS != 0
                }
            };
            if !more {
                return match failed {
                    Some(e) => Err(e),
                    None => Ok(done),
                };
            }
        }
    }

    /// Reads the rows of a result set of `columns` columns up to its EOF packet, giving `row`
    /// the first value of each, or every value when `all`; after `row` fails, the rest are
    /// read and dropped, and the failure kept in `failed`.
    fn rows(
        &mut self,
        binary: bool,
        all: bool,
        columns: usize,
        failed: &mut Option<DbError>,
        row: &mut impl FnMut(usize, Value<'_>) -> Result<()>,
    ) -> Result<()> {
        let ty = self
            .types
            .first()
            .copied()
            .unwrap_or(ColumnType::MYSQL_TYPE_NULL);
        loop {
            self.next_packet()?;
            let p = self.packet();
            match p.first() {
                Some(0xFE) if p.len() < 9 => return Ok(()),
                Some(0xFF) => return Err(self.server_error()),
                _ => {}
            }
            if failed.is_some() {
                continue;
            }
            let mut keep = |v| {
                if failed.is_none()
                    && let Err(e) = row(columns, v)
                {
                    *failed = Some(e);
                }
            };
            let decoded = match (all, binary) {
                (false, true) => first_binary(p, columns, ty).map(&mut keep),
                (false, false) => first_text(p).map(&mut keep),
                (true, true) => binary_values(p, &self.types, keep),
                (true, false) => text_values(p, columns, keep),
            };
            decoded.ok_or_else(|| protocol_error("row"))?;
        }
    }
}

impl Drop for MyWire {
    fn drop(&mut self) {
        // Say goodbye, so the server counts a clean disconnect, not an aborted one.
        self.begin();
        self.out.push(COM_QUIT);
        let _ = self.send(0);
    }
}

const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;

/// What a server error with `code` means for a client: deadlock, lock wait timeout, too many
/// connections are transient; server gone away, connection killed, shutdown: connection lost.
pub fn kind_of_code(code: u16) -> ErrorKind {
    match code {
        1213 | 1205 | 1040 => ErrorKind::Transient,
        2006 | 2013 | 1927 | 1053 => ErrorKind::ConnectionLost,
        _ => ErrorKind::Fatal,
    }
}
