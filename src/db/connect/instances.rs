//! The instances a run's targets name, one URL each: `--target` given once per instance,
//! libpq's host list in one URL (`postgres://h1:5432,h2:5433/db`), and SLOB's numbered RAC
//! services (`--service-base NAME --service-max N`: NAME1..NAMEN on one listener).

use crate::error::UsageError;
use crate::redact::redact_argument;

/// Most instances one run spreads its sessions over.
pub const MOST_INSTANCES: usize = 64;

/// One URL per instance, in the order given: each `--target`, a PostgreSQL host list split
/// into one URL per host (the user, database and options shared), and with `services`, each
/// Oracle target once per numbered service.
pub fn instance_urls(
    targets: &[String],
    services: Option<(&str, u32)>,
) -> Result<Vec<String>, UsageError> {
    let mut urls = Vec::new();
    for target in targets {
        let hosts = split_host_list(target)?;
        match services {
            Some((base, max)) => {
                for host in hosts {
                    urls.extend(numbered_services(&host, base, max)?);
                }
            }
            None => urls.extend(hosts),
        }
    }
    if urls.len() > MOST_INSTANCES {
        return Err(UsageError::new(format!(
            "--target names {} instances: corescale spreads sessions over at most {MOST_INSTANCES}",
            urls.len()
        )));
    }
    Ok(urls)
}

/// The URL with `user` in place of the user it names, and without the password it carries
/// (that was its own user's); None for a text that is not a URL.
pub fn as_user(text: &str, user: &str) -> Option<String> {
    let (_, start, end) = authority(text)?;
    let host = text[start..end]
        .rsplit_once('@')
        .map_or(&text[start..end], |(_, host)| host);
    let user = percent_encoding::utf8_percent_encode(user, percent_encoding::NON_ALPHANUMERIC);
    Some(format!("{}{user}@{host}{}", &text[..start], &text[end..]))
}

/// The scheme and the authority's bounds of a URL: `(scheme, start, end)`.
fn authority(text: &str) -> Option<(&str, usize, usize)> {
    let (scheme, _) = text.split_once("://")?;
    let start = scheme.len() + 3;
    let end = text[start..]
        .find(['/', '?', '#'])
        .map_or(text.len(), |end| start + end);
    Some((scheme, start, end))
}

/// A postgres:// URL with a host list in its authority, as one URL per host; any other URL
/// as it is.
fn split_host_list(text: &str) -> Result<Vec<String>, UsageError> {
    let Some((scheme, start, end)) = authority(text) else {
        return Ok(vec![text.to_string()]);
    };
    if !matches!(
        scheme.to_ascii_lowercase().as_str(),
        "postgres" | "postgresql"
    ) {
        return Ok(vec![text.to_string()]);
    }
    let authority = &text[start..end];
    // The user and password end at the last '@' (a password's own '@' is written %40).
    let hosts_at = authority.rfind('@').map_or(0, |at| at + 1);
    let hosts = &authority[hosts_at..];
    if !hosts.contains(',') {
        return Ok(vec![text.to_string()]);
    }
    hosts
        .split(',')
        .map(|host| {
            if host.is_empty() || host.starts_with(':') {
                return Err(UsageError::new(format!(
                    "--target '{}': an empty host in the host list: write postgres://user@h1:5432,h2:5433/db",
                    redact_argument(text)
                )));
            }
            Ok(format!(
                "{}{}{host}{}",
                &text[..start],
                &authority[..hosts_at],
                &text[end..]
            ))
        })
        .collect()
}

/// SLOB's `SQLNET_SERVICE_BASE` and `SQLNET_SERVICE_MAX`: an Oracle target without a service
/// (`oracle://user@host:1521`, EZConnect, or `oracle://user@`, TNS aliases) once per service
/// NAME1..NAMEN.
fn numbered_services(text: &str, base: &str, max: u32) -> Result<Vec<String>, UsageError> {
    let usage = |problem: &str| {
        UsageError::new(format!(
            "--service-base: {problem}: give --target oracle://USER@HOST:PORT (EZConnect) or oracle://USER@ (TNS aliases), without a service; the services are {base}1..{base}{max}"
        ))
    };
    if !text.to_ascii_lowercase().starts_with("oracle://") {
        return Err(usage(&format!(
            "'{}' is not an Oracle target",
            redact_argument(text)
        )));
    }
    if base.is_empty() || !base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(UsageError::new(format!(
            "--service-base '{base}' is not a service name: use letters, digits and '_' (SLOB's SQLNET_SERVICE_BASE, e.g. rac)"
        )));
    }
    let rest = &text["oracle://".len()..];
    let Some(at) = rest.rfind('@') else {
        return Err(usage("the target names no user"));
    };
    let connect = &rest[at + 1..];
    if connect.contains(['/', '(', '?']) {
        return Err(usage("the target already names a service or descriptor"));
    }
    Ok((1..=max)
        .map(|number| {
            if connect.is_empty() {
                format!("{text}{base}{number}")
            } else {
                format!("{text}/{base}{number}")
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(targets: &[&str], services: Option<(&str, u32)>) -> Result<Vec<String>, UsageError> {
        let targets: Vec<String> = targets.iter().map(ToString::to_string).collect();
        instance_urls(&targets, services)
    }

    #[test]
    fn each_target_is_an_instance_and_a_libpq_host_list_one_per_host() {
        assert_eq!(
            urls(
                &[
                    "postgres://u:p%40w@h1:5432,h2:5433,[::1]:5434/db?sslmode=require",
                    "mysql://root@m1:3306/test",
                ],
                None
            )
            .unwrap(),
            [
                "postgres://u:p%40w@h1:5432/db?sslmode=require",
                "postgres://u:p%40w@h2:5433/db?sslmode=require",
                "postgres://u:p%40w@[::1]:5434/db?sslmode=require",
                "mysql://root@m1:3306/test",
            ]
        );
        assert_eq!(
            urls(&["postgresql://a,b"], None).unwrap(),
            ["postgresql://a", "postgresql://b"]
        );
        // A MySQL URL is one instance, as MySQL's clients read it.
        assert_eq!(
            urls(&["mysql://root@m1,m2/test"], None).unwrap(),
            ["mysql://root@m1,m2/test"]
        );
        let empty = urls(&["postgres://u:secret@h1,,h2/db"], None).unwrap_err();
        assert!(empty.to_string().contains("empty host"), "{empty}");
        assert!(!empty.to_string().contains("secret"), "{empty}");
    }

    #[test]
    fn slob_numbered_services_become_one_instance_each() {
        assert_eq!(
            urls(&["oracle://slob:pw@scan.example:1521"], Some(("rac", 3))).unwrap(),
            [
                "oracle://slob:pw@scan.example:1521/rac1",
                "oracle://slob:pw@scan.example:1521/rac2",
                "oracle://slob:pw@scan.example:1521/rac3",
            ]
        );
        assert_eq!(
            urls(&["oracle://slob@"], Some(("SLOB_", 2))).unwrap(),
            ["oracle://slob@SLOB_1", "oracle://slob@SLOB_2"]
        );
        for (target, base, said) in [
            (
                "oracle://slob@host:1521/orcl",
                "rac",
                "already names a service",
            ),
            (
                "oracle://slob@(DESCRIPTION=(ADDRESS=(HOST=h)))",
                "rac",
                "descriptor",
            ),
            ("postgres://u@h/db", "rac", "not an Oracle target"),
            ("oracle://host:1521", "rac", "names no user"),
            ("oracle://slob@host", "rac 1", "not a service name"),
        ] {
            let error = urls(&[target], Some((base, 2))).unwrap_err().to_string();
            assert!(error.contains(said), "{target}: {error}");
        }
        let many = urls(&["oracle://slob@"], Some(("rac", 65))).unwrap_err();
        assert!(many.to_string().contains("at most 64"), "{many}");
    }

    #[test]
    fn a_url_as_another_user_keeps_the_rest_and_drops_the_password() {
        assert_eq!(
            as_user(
                "postgres://app:secret@db:5433/shop?sslmode=require",
                "rep ort"
            )
            .as_deref(),
            Some("postgres://rep%20ort@db:5433/shop?sslmode=require")
        );
        assert_eq!(
            as_user("mysql://db/shop", "bob").as_deref(),
            Some("mysql://bob@db/shop")
        );
        assert_eq!(as_user("host=db user=app", "bob"), None);
    }
}
