//! Authentication at connect: trust, password, md5 and SCRAM (with channel binding over
//! TLS), refusing what the settings forbid before a password is sent.

use super::*;

impl<S: Read + Write> WireSession<S> {
    pub(super) fn authenticate(&mut self) -> Result<()> {
        let mut scram = Scram::default();
        loop {
            match self.next_message()? {
                Message::AuthenticationOk => return self.accept_ok(&scram),
                Message::AuthenticationCleartextPassword => {
                    self.refuse_unbound("password")?;
                    let password = self.password()?;
                    frontend::password_message(password.as_bytes(), &mut self.outgoing)?;
                }
                Message::AuthenticationMd5Password(body) => {
                    self.refuse_unbound("md5")?;
                    let password = self.password()?;
                    let hash = md5_hash(
                        self.target.user().as_bytes(),
                        password.as_bytes(),
                        body.salt(),
                    );
                    frontend::password_message(hash.as_bytes(), &mut self.outgoing)?;
                }
                Message::AuthenticationSasl(body) => {
                    let mut mechanisms = body.mechanisms();
                    let (mut plain, mut plus) = (false, false);
                    while let Some(mechanism) = mechanisms.next()? {
                        plain |= mechanism == SCRAM_SHA_256;
                        plus |= mechanism == SCRAM_SHA_256_PLUS;
                    }
                    let (mechanism, channel) = self.sasl_mechanism(plain, plus)?;
                    let exchange = ScramSha256::new(self.password()?.as_bytes(), channel);
                    frontend::sasl_initial_response(
                        mechanism,
                        exchange.message(),
                        &mut self.outgoing,
                    )?;
                    scram.bound = mechanism == SCRAM_SHA_256_PLUS;
                    scram.exchange = Some(exchange);
                }
                Message::AuthenticationSaslContinue(body) => {
                    let exchange = scram
                        .exchange
                        .as_mut()
                        .ok_or_else(|| anyhow!("{}: SASL step before its start", self.target))?;
                    exchange.update(body.data())?;
                    frontend::sasl_response(exchange.message(), &mut self.outgoing)?;
                }
                Message::AuthenticationSaslFinal(body) => {
                    let exchange = scram
                        .exchange
                        .as_mut()
                        .ok_or_else(|| anyhow!("{}: SASL end before its start", self.target))?;
                    exchange.finish(body.data())?;
                    scram.finished = true;
                    continue;
                }
                Message::ErrorResponse(body) => return Err(self.refused(&body)),
                _ => bail!(
                    "{}: the server asks for an authentication method corescale does not speak (use password, md5 or scram-sha-256)",
                    self.target
                ),
            }
            self.send()?;
        }
    }

    /// The server's AuthenticationOk, taken only when what the settings demand was done.
    ///
    /// A SASL exchange is only done when the server's final message proved it knows the
    /// password: an AuthenticationOk before that is a server (or a man in the middle)
    /// skipping the proof, and is refused, as libpq refuses it.
    fn accept_ok(&self, scram: &Scram) -> Result<()> {
        if scram.exchange.is_some() && !scram.finished {
            bail!(
                "cannot connect to {}: the server said authentication succeeded before completing SCRAM (it did not prove it knows the password): refusing the connection",
                self.target
            );
        }
        let binding = self.target.settings().tls.channel_binding.value;
        if binding == ChannelBindingMode::Require && !scram.bound {
            bail!(
                "cannot connect to {}: channel_binding=require, but the server authenticated corescale without channel binding (it did not ask for SCRAM over TLS): use scram-sha-256 over TLS on the server, or channel_binding=prefer",
                self.target
            );
        }
        Ok(())
    }

    /// The SCRAM mechanism and channel binding to use, of those the server offers (`plain`
    /// SCRAM-SHA-256, `plus` SCRAM-SHA-256-PLUS), as `channel_binding` allows.
    fn sasl_mechanism(&self, plain: bool, plus: bool) -> Result<(&'static str, ChannelBinding)> {
        let binding = self.target.settings().tls.channel_binding.value;
        let end_point = self.transport.end_point.clone();
        let (mechanism, channel) = match (end_point, plus, binding) {
            (Some(end_point), true, ChannelBindingMode::Prefer | ChannelBindingMode::Require) => (
                SCRAM_SHA_256_PLUS,
                ChannelBinding::tls_server_end_point(end_point),
            ),
            (_, _, ChannelBindingMode::Require) => bail!(
                "cannot connect to {}: channel_binding=require, but {}: connect over TLS (sslmode=require or stricter) to a server that offers SCRAM-SHA-256-PLUS",
                self.target,
                if self.transport.tls.is_none() {
                    "this connection has no TLS"
                } else {
                    "the server offers no SCRAM-SHA-256-PLUS"
                }
            ),
            // Over TLS the client could bind: tell the server ("y"), so a man in the
            // middle cannot strip the PLUS mechanism unnoticed.
            (Some(_), false, ChannelBindingMode::Prefer) => {
                (SCRAM_SHA_256, ChannelBinding::unrequested())
            }
            _ => (SCRAM_SHA_256, ChannelBinding::unsupported()),
        };
        if mechanism == SCRAM_SHA_256 && !plain {
            if plus {
                bail!(
                    "cannot connect to {}: the server offers only SCRAM-SHA-256-PLUS (channel binding), which {}: connect over TLS with channel_binding=prefer or require",
                    self.target,
                    if binding == ChannelBindingMode::Disable {
                        "channel_binding=disable turns off"
                    } else {
                        "needs TLS"
                    }
                );
            }
            bail!(
                "{}: the server offers no SASL mechanism corescale knows (it speaks SCRAM-SHA-256)",
                self.target
            );
        }
        Ok((mechanism, channel))
    }

    /// The server's refusal, with advice when it may have refused a connection without TLS.
    fn refused(&self, body: &ErrorResponseBody) -> anyhow::Error {
        let error = ServerError::from_body(body);
        if self.transport.tls.is_none() && error.code == INVALID_AUTHORIZATION {
            let tls = &self.target.settings().tls;
            let text = format!(
                "cannot connect to {}: {error}. corescale connected without TLS ({}{}): if the server accepts this user only over TLS, use sslmode=require, or verify-full with sslrootcert",
                self.target,
                tls.shown(),
                if matches!(self.target.endpoint(), Endpoint::Socket(_)) {
                    ", over a Unix socket"
                } else {
                    ""
                }
            );
            return anyhow::Error::new(RefusedWithoutTls(text));
        }
        anyhow::Error::new(error).context(format!("cannot connect to {}", self.target))
    }

    /// With `channel_binding=require`, a password method that cannot bind is refused before
    /// the password is sent.
    fn refuse_unbound(&self, method: &str) -> Result<()> {
        if self.target.settings().tls.channel_binding.value == ChannelBindingMode::Require {
            bail!(
                "cannot connect to {}: channel_binding=require, but the server asks for the {method} method, which cannot bind: use scram-sha-256 over TLS on the server, or channel_binding=prefer",
                self.target
            );
        }
        Ok(())
    }

    fn password(&self) -> Result<String> {
        self.target.password().ok_or_else(|| {
            anyhow!(
                "{} asks for a password: give it in the URL, in CORESCALE_DB_PASSWORD or with --password-prompt",
                self.target
            )
        })
    }
}

/// A SCRAM exchange, once the server asked for one: whether it binds the channel, and
/// whether the server's final message proved it knows the password.
#[derive(Default)]
struct Scram {
    exchange: Option<ScramSha256>,
    bound: bool,
    finished: bool,
}
