//! The connection's start: the server's greeting, the capabilities both sides use, and
//! authentication (`mysql_native_password`, `caching_sha2_password` with its fast path and its
//! full authentication over a Unix socket or with the server's RSA key), with the packets of
//! `mysql_common`.

use mysql::mysql_common::constants::CapabilityFlags;
use mysql::mysql_common::io::ParseBuf;
use mysql::mysql_common::packets::{
    AuthPlugin, AuthSwitchRequest, HandshakePacket, HandshakeResponse,
};
use mysql::mysql_common::proto::MySerialize;

use super::{MAX_PACKET, MyWire, Result, protocol_error};
use crate::dbms::{DbError, ErrorKind};

impl MyWire {
    /// Reads the greeting and authenticates as `opts` says; `unix` when over a Unix socket
    /// (where a password may go in clear).
    pub(super) fn handshake(&mut self, opts: &mysql::Opts, unix: bool) -> Result<()> {
        self.next_packet()?;
        self.check_err()?;
        let raw = self.packet().to_vec();
        let hs: HandshakePacket = ParseBuf(&raw).parse(())?;
        if !hs
            .capabilities()
            .contains(CapabilityFlags::CLIENT_PROTOCOL_41)
        {
            return Err(protocol_error("server without protocol 4.1"));
        }
        let db = opts.get_db_name().filter(|d| !d.is_empty());
        let mut wanted = CapabilityFlags::CLIENT_PROTOCOL_41
            | CapabilityFlags::CLIENT_SECURE_CONNECTION
            | CapabilityFlags::CLIENT_LONG_PASSWORD
            | CapabilityFlags::CLIENT_TRANSACTIONS
            | CapabilityFlags::CLIENT_MULTI_STATEMENTS
            | CapabilityFlags::CLIENT_MULTI_RESULTS
            | CapabilityFlags::CLIENT_PS_MULTI_RESULTS
            | CapabilityFlags::CLIENT_PLUGIN_AUTH
            | CapabilityFlags::CLIENT_LONG_FLAG;
        if db.is_some() {
            wanted |= CapabilityFlags::CLIENT_CONNECT_WITH_DB;
        }
        self.caps = hs.capabilities() & wanted;
        let mut nonce = hs.scramble_1_ref().to_vec();
        nonce.extend_from_slice(hs.scramble_2_ref().unwrap_or(&[]));
        nonce.resize(20, 0);
        let plugin = match hs.auth_plugin() {
            Some(AuthPlugin::CachingSha2Password) => AuthPlugin::CachingSha2Password,
            _ => AuthPlugin::MysqlNativePassword,
        };
        let pass = opts.get_pass();
        let data = plugin.gen_data(pass, &nonce).map(|d| d.into_owned());
        let response = HandshakeResponse::new(
            data.as_deref(),
            hs.server_version_parsed().unwrap_or((0, 0, 0)),
            opts.get_user().map(str::as_bytes),
            db.map(str::as_bytes),
            Some(plugin),
            self.caps,
            None,
            MAX_PACKET,
        );
        self.begin();
        response.serialize(&mut self.out);
        self.send(self.seq)?;
        self.authenticate(pass, nonce, unix)
    }

    /// The server's answers to the handshake response until it says OK: at most one switch
    /// of authentication plugin, and caching_sha2_password's fast or full authentication.
    fn authenticate(&mut self, pass: Option<&str>, mut nonce: Vec<u8>, unix: bool) -> Result<()> {
        let mut switched = false;
        loop {
            self.next_packet()?;
            match self.packet().first() {
                Some(0x00) => return Ok(()),
                Some(0xFF) => return Err(self.server_error()),
                Some(0xFE) if !switched => {
                    switched = true;
                    nonce = self.switch_plugin(pass)?;
                }
                // caching_sha2_password: fast authentication succeeded; OK follows.
                Some(0x01) if self.packet().get(1) == Some(&0x03) => {}
                // caching_sha2_password: full authentication.
                Some(0x01) if self.packet().get(1) == Some(&0x04) => {
                    self.full_authentication(pass, &nonce, unix)?;
                }
                _ => return Err(protocol_error("during authentication")),
            }
        }
    }

    /// Answers the server's request to switch plugins (the packet just read); returns the
    /// new nonce.
    fn switch_plugin(&mut self, pass: Option<&str>) -> Result<Vec<u8>> {
        let req: AuthSwitchRequest = ParseBuf(self.packet()).parse(())?;
        let plugin = match req.auth_plugin() {
            AuthPlugin::CachingSha2Password => AuthPlugin::CachingSha2Password,
            AuthPlugin::MysqlNativePassword => AuthPlugin::MysqlNativePassword,
            other => {
                return Err(DbError {
                    kind: ErrorKind::Fatal,
                    message: format!(
                        "authentication plugin {} is not supported by ibench's client \
                         connections (mysql_native_password and caching_sha2_password are)",
                        String::from_utf8_lossy(other.as_bytes())
                    ),
                });
            }
        };
        let mut nonce = req.plugin_data().to_vec();
        if nonce.last() == Some(&0) {
            nonce.pop();
        }
        let data = plugin.gen_data(pass, &nonce).map(|d| d.into_owned());
        self.begin();
        if let Some(d) = data {
            d.serialize(&mut self.out);
        }
        self.send(self.seq)?;
        Ok(nonce)
    }

    /// caching_sha2_password's full authentication: the password in clear over a Unix
    /// socket, else encrypted with the server's RSA public key.
    fn full_authentication(&mut self, pass: Option<&str>, nonce: &[u8], unix: bool) -> Result<()> {
        let mut secret = pass.unwrap_or("").as_bytes().to_vec();
        secret.push(0);
        if !unix {
            // Ask for the server's RSA public key and encrypt with it.
            self.begin();
            self.out.push(0x02);
            self.send(self.seq)?;
            self.next_packet()?;
            self.check_err()?;
            let key = self.packet().get(1..).unwrap_or(&[]).to_vec();
            for (i, b) in secret.iter_mut().enumerate() {
                *b ^= nonce[i % nonce.len()];
            }
            secret = mysql::mysql_common::crypto::encrypt(&secret, &key);
        }
        self.begin();
        self.out.extend_from_slice(&secret);
        self.send(self.seq)
    }
}
