//! TLS for corescale's own PostgreSQL client, with rustls (pure Rust: the portable binary
//! needs no OpenSSL on the server). Certificates are checked as libpq's `sslmode` says:
//! `verify-full` the chain and the host name, `verify-ca` the chain only, `require`, `prefer`
//! and `allow` nothing unless a root certificate is given (then the chain, as libpq does).
//! Failures are explained in the driver's own vocabulary.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore,
};
use serde::{Deserialize, Serialize};
use sha2::Digest;

use super::settings::{RootCertificates, TlsMode, TlsSettings, TlsVocabulary};

/// What a connection negotiated, recorded with the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsFacts {
    /// "TLSv1.3", as PostgreSQL's pg_stat_ssl and MariaDB's Ssl_version write it.
    pub protocol: String,
    /// The cipher suite's IANA name, e.g. "TLS_AES_256_GCM_SHA384".
    pub cipher: String,
}

impl TlsFacts {
    pub fn of(connection: &ClientConnection) -> Self {
        let protocol = match connection.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3".to_string(),
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2".to_string(),
            Some(other) => format!("{other:?}"),
            None => "unknown".to_string(),
        };
        let cipher = connection
            .negotiated_cipher_suite()
            .map(|suite| format!("{:?}", suite.suite()).replacen("TLS13_", "TLS_", 1))
            .unwrap_or_else(|| "unknown".to_string());
        Self { protocol, cipher }
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The client configuration and the name to present for a connection to `host`.
pub(crate) fn client_config(
    tls: &TlsSettings,
    host: &str,
) -> Result<(Arc<ClientConfig>, ServerName<'static>)> {
    let mode = tls.mode.value;
    let provider = provider();
    // libpq: any TLS with a root certificate given checks the chain, as verify-ca (MySQL's
    // client: REQUIRED with ssl-ca given).
    let check_chain = mode.verifies_certificate()
        || (tls.root.is_some()
            && match tls.vocabulary {
                TlsVocabulary::Libpq => {
                    matches!(mode, TlsMode::Require | TlsMode::Prefer | TlsMode::Allow)
                }
                _ => mode == TlsMode::Require,
            });
    let check_name = mode == TlsMode::VerifyFull;
    let inner = if check_chain {
        let Some(root) = &tls.root else {
            bail!(
                "{} checks the server's certificate but no root certificate is given: set {}=/path/to/ca.pem (or {}=system for the system's roots){}",
                tls.shown(),
                tls.vocabulary.root_option(),
                tls.vocabulary.root_option(),
                if tls.vocabulary == TlsVocabulary::Libpq {
                    ", or put it in ~/.postgresql/root.crt"
                } else {
                    ""
                }
            );
        };
        let roots = root_store(&root.value, tls)?;
        Some(
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .context("building the certificate verifier")?,
        )
    } else {
        None
    };
    let verifier = Arc::new(Verifier {
        inner,
        check_name,
        provider: provider.clone(),
    });
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("choosing TLS versions")?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let config = match (&tls.client_certificate, &tls.client_key) {
        (Some(certificate), Some(key)) => {
            let chain = CertificateDer::pem_file_iter(&certificate.value)
                .and_then(|certificates| certificates.collect::<Result<Vec<_>, _>>())
                .map_err(|error| {
                    anyhow!(
                        "cannot read the client certificate {}: {error}",
                        certificate.value.display()
                    )
                })?;
            check_key_file(&key.value)?;
            let key_der = PrivateKeyDer::from_pem_file(&key.value).map_err(|error| {
                anyhow!(
                    "cannot read the client key {}: {error}",
                    key.value.display()
                )
            })?;
            builder
                .with_client_auth_cert(chain, key_der)
                .context("using the client certificate")?
        }
        (Some(certificate), None) => bail!(
            "a client certificate ({}) needs its key: set sslkey / ssl-key",
            certificate.value.display()
        ),
        _ => builder.with_no_client_auth(),
    };
    let name = match ServerName::try_from(host.to_string()) {
        Ok(name) => name,
        Err(_) if !check_name => {
            ServerName::try_from("localhost").map_err(|_| anyhow!("no placeholder server name"))?
        }
        Err(_) => bail!(
            "host '{host}' is not a name a certificate can hold: connect by DNS name or IP address, or use {}",
            tls.vocabulary.called(TlsMode::VerifyCa)
        ),
    };
    Ok((Arc::new(config), name))
}

/// libpq's rule for a private key: no access for others (0600), or 0640 owned by root.
fn check_key_file(path: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(path)
        .with_context(|| format!("cannot read the client key {}", path.display()))?;
    let mode = metadata.mode() & 0o777;
    let private = mode & 0o077 == 0 || (metadata.uid() == 0 && mode & 0o037 == 0);
    if !private {
        bail!(
            "the client key {} has group or world access ({mode:o}): chmod 0600 it (as libpq requires)",
            path.display()
        );
    }
    Ok(())
}

fn root_store(roots: &RootCertificates, tls: &TlsSettings) -> Result<RootCertStore> {
    let mut store = RootCertStore::empty();
    match roots {
        RootCertificates::File(path) => {
            let certificates = CertificateDer::pem_file_iter(path)
                .and_then(|certificates| certificates.collect::<Result<Vec<_>, _>>())
                .map_err(|error| {
                    anyhow!(
                        "cannot read {}={}: {error}",
                        tls.vocabulary.root_option(),
                        path.display()
                    )
                })?;
            let (added, _) = store.add_parsable_certificates(certificates);
            if added == 0 {
                bail!(
                    "{}={} holds no certificate: give the PEM file of the CA that signed the server's certificate",
                    tls.vocabulary.root_option(),
                    path.display()
                );
            }
        }
        RootCertificates::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                bail!(
                    "{}=system found no trusted roots on this system: give a CA file instead",
                    tls.vocabulary.root_option()
                );
            }
        }
    }
    Ok(store)
}

/// Checks what the mode asks for: the chain against the roots when `inner` is set, and the
/// host name too when `check_name`; signatures of the handshake always.
#[derive(Debug)]
struct Verifier {
    inner: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(inner) = &self.inner else {
            return Ok(ServerCertVerified::assertion());
        };
        match inner.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            // The chain was checked before the name: only the name failed.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            outcome => outcome,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            certificate,
            signature,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            certificate,
            signature,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A failed handshake in words, with the fix, in the driver's vocabulary.
pub(crate) fn explain_handshake(error: &rustls::Error, tls: &TlsSettings, host: &str) -> String {
    let root = tls
        .root
        .as_ref()
        .map_or_else(String::new, |root| root.value.to_string());
    match error {
        // `require` checks the certificate only because a root is given (as libpq and the
        // mysql client do): the way out is to drop the root, not to use `require`.
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer)
            if !tls.mode.value.verifies_certificate() && tls.root.is_some() =>
        {
            format!(
                "the server's certificate is not trusted by {}={root} ({} checks it when {} is given, as the database's own client does): give the CA that signed it, or drop {} to encrypt without checking the certificate",
                tls.vocabulary.root_option(),
                tls.shown(),
                tls.vocabulary.root_option(),
                tls.vocabulary.root_option()
            )
        }
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => format!(
            "host name '{host}' does not match the server's certificate ({}): connect by a name the certificate holds{}",
            tls.shown(),
            if matches!(
                tls.root.as_ref().map(|root| &root.value),
                Some(RootCertificates::System)
            ) {
                String::new()
            } else {
                format!(
                    ", or use {} to check the CA only",
                    tls.vocabulary.called(TlsMode::VerifyCa)
                )
            }
        ),
        rustls::Error::InvalidCertificate(
            CertificateError::UnknownIssuer | CertificateError::BadSignature,
        ) => format!(
            "the server's certificate is not trusted by {}={root}: give the CA that signed it, or drop {} and use {} to encrypt without checking the certificate",
            tls.vocabulary.root_option(),
            tls.vocabulary.root_option(),
            tls.vocabulary.called(TlsMode::Require)
        ),
        rustls::Error::InvalidCertificate(
            CertificateError::Expired | CertificateError::ExpiredContext { .. },
        ) => "the server's certificate has expired: renew it on the server".to_string(),
        rustls::Error::AlertReceived(alert) => format!(
            "the server ended the TLS handshake ({alert:?}): does it accept this client certificate and TLS 1.2 or 1.3?"
        ),
        other => format!("the TLS handshake failed: {other}"),
    }
}

/// The `tls-server-end-point` channel binding (RFC 5929): the hash of the server's
/// certificate, by the hash of its signature algorithm (SHA-256 for MD5 and SHA-1).
pub(crate) fn server_end_point(certificate: &[u8]) -> Vec<u8> {
    /// DER of the OIDs signed with SHA-384 and SHA-512 (RSA and ECDSA).
    const SHA384: [&[u8]; 2] = [
        &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0c],
        &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03],
    ];
    const SHA512: [&[u8]; 2] = [
        &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0d],
        &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x04],
    ];
    let algorithm = signature_algorithm(certificate).unwrap_or_default();
    if SHA384.contains(&algorithm) {
        sha2::Sha384::digest(certificate).to_vec()
    } else if SHA512.contains(&algorithm) {
        sha2::Sha512::digest(certificate).to_vec()
    } else {
        sha2::Sha256::digest(certificate).to_vec()
    }
}

/// The OID of a certificate's signatureAlgorithm: Certificate ::= SEQUENCE { tbsCertificate,
/// signatureAlgorithm SEQUENCE { OID, ... }, signature }.
fn signature_algorithm(certificate: &[u8]) -> Option<&[u8]> {
    let (_, certificate, _) = der_element(certificate)?;
    let (_, _, after_tbs) = der_element(certificate)?;
    let (_, algorithm, _) = der_element(after_tbs)?;
    let (tag, oid, _) = der_element(algorithm)?;
    (tag == 0x06).then_some(oid)
}

/// One DER element: its tag, its contents and what follows it.
fn der_element(bytes: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = bytes.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let length = rest[..count]
            .iter()
            .fold(0usize, |length, byte| (length << 8) | usize::from(*byte));
        (length, &rest[count..])
    };
    (rest.len() >= length).then(|| (tag, &rest[..length], &rest[length..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn der_elements_are_read_with_short_and_long_lengths() {
        assert_eq!(
            der_element(&[0x30, 0x02, 0x05, 0x00, 0xff]),
            Some((0x30, &[0x05, 0x00][..], &[0xff][..]))
        );
        let long: Vec<u8> = [0x04, 0x81, 0x80].into_iter().chain([7u8; 128]).collect();
        assert_eq!(der_element(&long).map(|(_, body, _)| body.len()), Some(128));
        assert_eq!(der_element(&[0x30, 0x05, 0x00]), None);
    }

    #[test]
    fn the_end_point_hash_follows_the_signature_algorithm() {
        // SEQUENCE { SEQUENCE {} (tbs), SEQUENCE { OID ecdsa-with-SHA384 }, BIT STRING }
        let oid = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03];
        let mut algorithm = vec![0x06, oid.len() as u8];
        algorithm.extend(oid);
        let mut body = vec![0x30, 0x00, 0x30, algorithm.len() as u8];
        body.extend(algorithm);
        body.extend([0x03, 0x01, 0x00]);
        let mut certificate = vec![0x30, body.len() as u8];
        certificate.extend(body);
        assert_eq!(signature_algorithm(&certificate), Some(&oid[..]));
        assert_eq!(server_end_point(&certificate).len(), 48);
        assert_eq!(server_end_point(b"not DER").len(), 32);
    }
}
