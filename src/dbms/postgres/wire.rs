//! A lean synchronous PostgreSQL client for the client threads' connections: the extended
//! query protocol over a blocking socket, messages encoded and parsed by `postgres-protocol`
//! (the protocol crate under `postgres`), values converted by `postgres-types`.
//!
//! Why not the `postgres` crate here: it drives `tokio-postgres` through a runtime per
//! connection, and every statement pays for the runtime's wake-ups (an eventfd write and two
//! `epoll_wait`s beside the socket calls) and its channels. Measured with
//! `scripts/bench-client`, that made ibench's client CPU per point query 1.4x pgbench's (see
//! docs/PERFORMANCE.md). Here a statement is one `send` of Bind/Execute/Sync and, usually, one
//! blocking `recv` of the whole reply; buffers are reused, nothing is allocated per statement.
//! The `postgres` crate still serves everything off the hot path (settings, counters,
//! maintenance, the results store).
//!
//! Supported: TCP and Unix sockets, trust, cleartext, MD5 and SCRAM-SHA-256 authentication, no
//! TLS (as elsewhere in ibench).

use std::io;
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres::config::{Config, Host};
use postgres_protocol::authentication::{md5_hash, sasl};
use postgres_protocol::message::backend::{ErrorResponseBody, Message};
use postgres_protocol::message::frontend;
use postgres_types::{ToSql, Type};

use crate::dbms::socket::Socket;
use crate::dbms::{DbError, ErrorKind};

type Result<T> = std::result::Result<T, DbError>;

/// What writing one parameter value gives: whether it is NULL, or why it cannot be sent.
pub type EncodeResult =
    std::result::Result<postgres_types::IsNull, Box<dyn std::error::Error + Sync + Send>>;

fn protocol_error(what: &str) -> DbError {
    DbError {
        kind: ErrorKind::ConnectionLost,
        message: format!("unexpected message from the server: {what}"),
    }
}

fn server_error(body: &ErrorResponseBody) -> DbError {
    let (mut code, mut message) = (String::new(), String::new());
    let mut fields = body.fields();
    while let Ok(Some(f)) = fields.next() {
        match f.type_() {
            b'C' => code = String::from_utf8_lossy(f.value_bytes()).into_owned(),
            b'M' => message = String::from_utf8_lossy(f.value_bytes()).into_owned(),
            _ => {}
        }
    }
    DbError {
        kind: kind_of_sqlstate(Some(&code)),
        message: format!("{message} ({code})"),
    }
}

/// A prepared statement on one connection: its name and the types of its parameters and
/// result columns.
#[derive(Clone, Debug)]
pub struct Statement {
    name: String,
    params: Vec<Type>,
    columns: Vec<Type>,
}

/// One row of a result, valid while the callback that receives it runs.
pub struct Row<'a> {
    buf: &'a [u8],
    ranges: &'a [Option<std::ops::Range<usize>>],
    types: &'a [Type],
}

impl<'a> Row<'a> {
    /// Number of columns.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// The type of column `i` (prepared statements; `None` in a simple query's rows).
    pub fn ty(&self, i: usize) -> Option<&Type> {
        self.types.get(i)
    }

    /// True for a row without columns.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Column `i` as sent (binary for prepared statements, text for simple queries), `None`
    /// for NULL.
    pub fn raw(&self, i: usize) -> Option<&'a [u8]> {
        let r = self.ranges.get(i)?.clone()?;
        Some(&self.buf[r])
    }

    /// Column `i` as text (simple queries return text), `None` for NULL.
    pub fn text(&self, i: usize) -> Option<&'a str> {
        let r = self.ranges.get(i)?.clone()?;
        std::str::from_utf8(&self.buf[r]).ok()
    }
}

/// One connection.
pub struct PgWire {
    socket: Socket,
    out: BytesMut,
    input: BytesMut,
    /// What the socket's reads go into, zeroed once (see `next`).
    scratch: Box<[u8]>,
    ranges: Vec<Option<std::ops::Range<usize>>>,
    statements: usize,
}

impl PgWire {
    /// Connects and authenticates as `config` says (first host that answers).
    pub fn connect(config: &Config) -> Result<Self> {
        let timeout = config.get_connect_timeout().copied();
        let mut last = None;
        for (i, host) in config.get_hosts().iter().enumerate() {
            let port = config
                .get_ports()
                .get(i)
                .or(config.get_ports().first())
                .copied()
                .unwrap_or(5432);
            match open(host, port, timeout) {
                Ok(socket) => return Self::start(socket, config),
                Err(e) => last = Some(e),
            }
        }
        Err(last.map(DbError::from).unwrap_or_else(|| DbError {
            kind: ErrorKind::Fatal,
            message: "no host to connect to".to_string(),
        }))
    }

    fn start(socket: Socket, config: &Config) -> Result<Self> {
        let mut c = PgWire {
            socket,
            out: BytesMut::with_capacity(8192),
            input: BytesMut::with_capacity(16384),
            scratch: vec![0; 16384].into_boxed_slice(),
            ranges: Vec::new(),
            statements: 0,
        };
        let user = config.get_user().unwrap_or("postgres");
        let mut params = vec![("user", user), ("client_encoding", "UTF8")];
        if let Some(db) = config.get_dbname() {
            params.push(("database", db));
        }
        if let Some(app) = config.get_application_name() {
            params.push(("application_name", app));
        }
        if let Some(options) = config.get_options() {
            params.push(("options", options));
        }
        frontend::startup_message(params, &mut c.out)?;
        c.flush()?;
        let password = config.get_password();
        let need_password = || DbError {
            kind: ErrorKind::Fatal,
            message: "the server asks for a password and none was given".to_string(),
        };
        let mut scram: Option<sasl::ScramSha256> = None;
        loop {
            match c.next()? {
                Message::AuthenticationOk
                | Message::ParameterStatus(_)
                | Message::BackendKeyData(_)
                | Message::NoticeResponse(_) => {}
                Message::AuthenticationCleartextPassword => {
                    frontend::password_message(password.ok_or_else(need_password)?, &mut c.out)?;
                    c.flush()?;
                }
                Message::AuthenticationMd5Password(body) => {
                    let hash = md5_hash(
                        user.as_bytes(),
                        password.ok_or_else(need_password)?,
                        body.salt(),
                    );
                    frontend::password_message(hash.as_bytes(), &mut c.out)?;
                    c.flush()?;
                }
                Message::AuthenticationSasl(_) => {
                    let s = sasl::ScramSha256::new(
                        password.ok_or_else(need_password)?,
                        sasl::ChannelBinding::unsupported(),
                    );
                    frontend::sasl_initial_response(sasl::SCRAM_SHA_256, s.message(), &mut c.out)?;
                    c.flush()?;
                    scram = Some(s);
                }
                Message::AuthenticationSaslContinue(body) => {
                    let s = scram
                        .as_mut()
                        .ok_or_else(|| protocol_error("SASL continue"))?;
                    s.update(body.data())?;
                    frontend::sasl_response(s.message(), &mut c.out)?;
                    c.flush()?;
                }
                Message::AuthenticationSaslFinal(body) => {
                    let s = scram.as_mut().ok_or_else(|| protocol_error("SASL final"))?;
                    s.finish(body.data())?;
                }
                Message::ReadyForQuery(_) => return Ok(c),
                Message::ErrorResponse(body) => return Err(server_error(&body)),
                _ => return Err(protocol_error("during authentication")),
            }
        }
    }

    fn flush(&mut self) -> Result<()> {
        let r = self.socket.write_all(&self.out);
        self.out.clear();
        Ok(r?)
    }

    /// The next message, reading from the socket as needed.
    fn next(&mut self) -> Result<Message> {
        loop {
            if let Some(m) = Message::parse(&mut self.input)? {
                return Ok(m);
            }
            // Read into a buffer zeroed once (never uninitialised bytes behind a `&mut [u8]`),
            // then append what came: a copy of the bytes read, small beside a round trip.
            let n = self.socket.read(&mut self.scratch[..]);
            if let Ok(got) = n {
                self.input.extend_from_slice(&self.scratch[..got]);
            }
            match n {
                Ok(0) => {
                    return Err(DbError {
                        kind: ErrorKind::ConnectionLost,
                        message: "the server closed the connection".to_string(),
                    });
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Reads to ReadyForQuery after an error, so the connection can be used again.
    fn drain(&mut self, err: DbError) -> DbError {
        loop {
            match self.next() {
                Ok(Message::ReadyForQuery(_)) => return err,
                Ok(_) => {}
                Err(e) => return e,
            }
        }
    }

    /// Prepares `sql` (named, for this connection's life).
    pub fn prepare(&mut self, sql: &str) -> Result<Statement> {
        self.statements += 1;
        self.prepare_as(format!("s{}", self.statements), sql)
    }

    /// Prepares `sql` as the unnamed statement, which the next unnamed one replaces: for
    /// statements run once.
    pub fn prepare_unnamed(&mut self, sql: &str) -> Result<Statement> {
        self.prepare_as(String::new(), sql)
    }

    fn prepare_as(&mut self, name: String, sql: &str) -> Result<Statement> {
        frontend::parse(&name, sql, std::iter::empty(), &mut self.out)?;
        frontend::describe(b'S', &name, &mut self.out)?;
        frontend::sync(&mut self.out);
        self.flush()?;
        let mut stmt = Statement {
            name,
            params: Vec::new(),
            columns: Vec::new(),
        };
        let mut error = None;
        loop {
            match self.next()? {
                Message::ParseComplete | Message::NoData | Message::NoticeResponse(_) => {}
                Message::ParameterDescription(body) => {
                    let mut it = body.parameters();
                    while let Some(oid) = it.next()? {
                        stmt.params
                            .push(Type::from_oid(oid).unwrap_or(Type::UNKNOWN));
                    }
                }
                Message::RowDescription(body) => {
                    let mut it = body.fields();
                    while let Some(f) = it.next()? {
                        stmt.columns
                            .push(Type::from_oid(f.type_oid()).unwrap_or(Type::UNKNOWN));
                    }
                }
                Message::ErrorResponse(body) => error = Some(server_error(&body)),
                Message::ReadyForQuery(_) => {
                    return match error {
                        Some(e) => Err(e),
                        None => Ok(stmt),
                    };
                }
                _ => return Err(protocol_error("after Parse")),
            }
        }
    }

    /// Runs `stmt` with `params` (binary), calling `row` for each row; returns the rows the
    /// command reports (affected or returned).
    pub fn query(
        &mut self,
        stmt: &Statement,
        params: &[&(dyn ToSql + Sync)],
        row: impl FnMut(&Row<'_>) -> Result<()>,
    ) -> Result<u64> {
        self.query_with(stmt, params.len(), |i, ty, buf| params[i].to_sql_checked(ty, buf), row)
    }

    /// Runs `stmt` with `n` parameters, parameter `i` written (binary, as the server's type
    /// `ty` for it) by `encode(i, ty, buf)`, calling `row` for each row; returns the rows the
    /// command reports (affected or returned). Nothing is allocated: the values go straight
    /// into the connection's buffer.
    pub fn query_with(
        &mut self,
        stmt: &Statement,
        n: usize,
        mut encode: impl FnMut(usize, &Type, &mut BytesMut) -> EncodeResult,
        mut row: impl FnMut(&Row<'_>) -> Result<()>,
    ) -> Result<u64> {
        if n != stmt.params.len() {
            return Err(DbError {
                kind: ErrorKind::Fatal,
                message: format!(
                    "statement takes {} parameters, {n} given",
                    stmt.params.len(),
                ),
            });
        }
        let bound = frontend::bind(
            "",
            &stmt.name,
            std::iter::once(1),
            stmt.params.iter().enumerate(),
            |(i, ty), buf| {
                Ok(match encode(i, ty, buf)? {
                    postgres_types::IsNull::Yes => postgres_protocol::IsNull::Yes,
                    postgres_types::IsNull::No => postgres_protocol::IsNull::No,
                })
            },
            std::iter::once(1),
            &mut self.out,
        );
        if let Err(e) = bound {
            self.out.clear();
            return Err(DbError {
                kind: ErrorKind::Fatal,
                message: match e {
                    frontend::BindError::Conversion(e) => format!("cannot send a value: {e}"),
                    frontend::BindError::Serialization(e) => format!("cannot send a value: {e}"),
                },
            });
        }
        frontend::execute("", 0, &mut self.out)?;
        frontend::sync(&mut self.out);
        self.flush()?;
        self.results(&stmt.columns, &mut row)
    }

    /// Runs `sql` as a simple query (text protocol, several statements allowed), calling
    /// `row` for each row; returns the rows the last command reports.
    pub fn simple_query(
        &mut self,
        sql: &str,
        mut row: impl FnMut(&Row<'_>) -> Result<()>,
    ) -> Result<u64> {
        frontend::query(sql, &mut self.out)?;
        self.flush()?;
        self.results(&[], &mut row)
    }

    /// Reads a statement's results up to ReadyForQuery.
    fn results(
        &mut self,
        types: &[Type],
        row: &mut impl FnMut(&Row<'_>) -> Result<()>,
    ) -> Result<u64> {
        let mut affected = 0;
        let mut error = None;
        loop {
            match self.next()? {
                Message::DataRow(body) if error.is_none() => {
                    self.ranges.clear();
                    let mut it = body.ranges();
                    while let Some(r) = it.next()? {
                        self.ranges.push(r);
                    }
                    let r = Row {
                        buf: body.buffer(),
                        ranges: &self.ranges,
                        types: if types.is_empty() {
                            &TEXT_COLUMNS
                        } else {
                            types
                        },
                    };
                    if let Err(e) = row(&r) {
                        error = Some(e);
                    }
                }
                Message::CommandComplete(body) => {
                    let tag = body.tag()?;
                    affected = tag
                        .rsplit(' ')
                        .next()
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0);
                }
                Message::ErrorResponse(body) => {
                    let e = server_error(&body);
                    return Err(self.drain(e));
                }
                Message::ReadyForQuery(_) => {
                    return match error {
                        Some(e) => Err(e),
                        None => Ok(affected),
                    };
                }
                _ => {}
            }
        }
    }
}

/// Column types of simple-query rows, which are text (read with [`Row::text`]).
static TEXT_COLUMNS: [Type; 0] = [];

impl Drop for PgWire {
    fn drop(&mut self) {
        // Say goodbye, so the server logs a clean disconnect.
        frontend::terminate(&mut self.out);
        let _ = self.flush();
    }
}

fn open(host: &Host, port: u16, timeout: Option<Duration>) -> io::Result<Socket> {
    match host {
        Host::Tcp(name) => {
            let addrs = std::net::ToSocketAddrs::to_socket_addrs(&(name.as_str(), port))?;
            let mut last = None;
            for addr in addrs {
                let s = match timeout {
                    Some(t) => TcpStream::connect_timeout(&addr, t),
                    None => TcpStream::connect(addr),
                };
                match s {
                    Ok(s) => {
                        s.set_nodelay(true)?;
                        return Ok(Socket::tcp(s));
                    }
                    Err(e) => last = Some(e),
                }
            }
            Err(last.unwrap_or_else(|| io::Error::other(format!("{name} has no address"))))
        }
        Host::Unix(dir) => Ok(Socket::unix(UnixStream::connect(
            dir.join(format!(".s.PGSQL.{port}")),
        )?)),
    }
}

/// What an error with SQLSTATE `code` means for a client (`None`: the client lost the
/// server, an I/O error or an unexpected end).
pub fn kind_of_sqlstate(code: Option<&str>) -> ErrorKind {
    match code {
        Some("40001" | "40P01" | "55P03" | "53300") => ErrorKind::Transient,
        Some(c) if c.starts_with("08") || c.starts_with("57P") => ErrorKind::ConnectionLost,
        Some(_) => ErrorKind::Fatal,
        None => ErrorKind::ConnectionLost,
    }
}
