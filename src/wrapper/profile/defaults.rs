//! The engines' default profiles this command carries (the files in
//! `defaults/`, Debian's, kept byte for byte: see its README), and which
//! one stands for an engine version: its own, else the nearest older one
//! known, said so.

use super::Engine;

/// A default this command carries: the engine version it is the default
/// of (major, minor), and the file's text.
pub struct Embedded {
    pub engine: Engine,
    pub version: (u32, u32),
    pub json: &'static str,
}

impl Embedded {
    /// `20.10`, as the file and the release name it.
    pub fn version_name(&self) -> String {
        format!("{}.{}", self.version.0, self.version.1)
    }

    /// The release's file name: `eatmydata-docker-20.10.json`.
    pub fn file_name(&self) -> String {
        format!(
            "eatmydata-{}-{}.json",
            self.engine.name(),
            self.version_name()
        )
    }
}

/// Every default carried, oldest first for each engine.
pub const EMBEDDED: &[Embedded] = &[
    Embedded {
        engine: Engine::Docker,
        version: (20, 10),
        json: include_str!("defaults/docker-20.10.json"),
    },
    Embedded {
        engine: Engine::Docker,
        version: (26, 1),
        json: include_str!("defaults/docker-26.1.json"),
    },
    Embedded {
        engine: Engine::Podman,
        version: (4, 3),
        json: include_str!("defaults/podman-4.3.json"),
    },
    Embedded {
        engine: Engine::Podman,
        version: (5, 4),
        json: include_str!("defaults/podman-5.4.json"),
    },
];

/// The first Docker that passes a rule's `errnoRet` on to the runtime
/// (moby 20.10); before it, every sync would be refused `EPERM`.
pub const DOCKER_ERRNO_RET: (u32, u32) = (20, 10);
/// The first podman whose profiles take `errnoRet` (containers/common
/// as podman 3.0 vendored it).
pub const PODMAN_ERRNO_RET: (u32, u32) = (3, 0);

/// An engine version's major and minor number, from what an engine says
/// (`26.1.5+dfsg1`, `20.10.24`, `28.0.1-rd`, `v27.3`) or a user gives
/// (`26`: any 26, read as the newest minor); `None` for anything else.
pub fn parse_version(text: &str) -> Option<(u32, u32)> {
    let text = text.trim();
    let text = text.strip_prefix('v').unwrap_or(text);
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let Some((major, rest)) = text.split_once('.') else {
        return all_digits(text).then(|| Some((text.parse().ok()?, u32::MAX)))?;
    };
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let after = rest[end..].chars().next();
    if !all_digits(major) || end == 0 || !matches!(after, None | Some('.' | '-' | '+' | '~')) {
        return None;
    }
    Some((major.parse().ok()?, rest[..end].parse().ok()?))
}

/// The default carried for `version` of `engine`: its own, else the
/// nearest older; `None` when every one carried is newer.
pub fn nearest(engine: Engine, version: (u32, u32)) -> Option<&'static Embedded> {
    EMBEDDED
        .iter()
        .filter(|e| e.engine == engine && e.version <= version)
        .max_by_key(|e| e.version)
}

/// The newest default carried for `engine`.
pub fn newest(engine: Engine) -> &'static Embedded {
    EMBEDDED
        .iter()
        .filter(|e| e.engine == engine)
        .max_by_key(|e| e.version)
        .unwrap_or(&EMBEDDED[0])
}

/// The oldest default carried for `engine`.
pub fn oldest(engine: Engine) -> &'static Embedded {
    EMBEDDED
        .iter()
        .filter(|e| e.engine == engine)
        .min_by_key(|e| e.version)
        .unwrap_or(&EMBEDDED[0])
}
