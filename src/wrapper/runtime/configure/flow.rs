//! The steps of a registration and of its removal, in order, each told on
//! stdout: the runtime checked to be this command, the engine's file
//! changed (a listing first), BuildKit's drop-in for docker, then the
//! engine told to reload, or the user told what to do.

use std::fs;
use std::path::{Path, PathBuf};

use super::args::Request;
use super::program::{library_left, place_library, roots_place, runtime_path};
use super::reload::{self, Dockerd, Reloaded};
use super::{Engine, Error, REGISTERED, Want};
use super::{RUNTIME_FILE, buildkit, config_of, docker, file, inuse, reach};

/// `configure ENGINE [--default] ...`.
pub fn register(request: &Request) -> Result<(), Error> {
    let config = config_of(request);
    // The file first: one that cannot be read stops it with nothing made.
    let old = file::read(&config)?;
    let runtime = runtime_path(request)?;
    let want = Want {
        path: runtime.display().to_string(),
        default: request.default,
        real: request.real_runtime.clone(),
        keep_binds: request.keep_binds,
    };
    place_library(request, &runtime);
    let text = old.as_deref().unwrap_or("");
    let new = request
        .engine
        .register(text, &want)
        .map_err(|why| unparsable(&config, why))?;
    prove(request, &runtime)?;
    let unchanged = format!("already registers {REGISTERED} as asked");
    let changed = apply(request, &config, old.as_deref(), Some(&new), &unchanged)?;
    let mut drop_in = false;
    if request.engine == Engine::Docker && request.default {
        drop_in = buildkit_on(request, &want.path)?;
    }
    let (place, usual) = roots_place();
    if runtime == place.join("bin").join(RUNTIME_FILE) {
        reach::link_copy(&runtime, usual, request.dry_run);
    }
    if (changed || drop_in) && request.dry_run {
        say!("Dry run: nothing written.");
    } else if changed {
        let default = request.default || request.engine.names_default(&new);
        let how = request.engine.how_to_use(default);
        tell_reload(request, &config, &new, &how);
    }
    Ok(())
}

/// `configure ENGINE --remove`.
pub fn remove(request: &Request) -> Result<(), Error> {
    let config = config_of(request);
    let old = file::read(&config)?;
    let text = old.as_deref().unwrap_or("");
    let alias = match request.engine {
        Engine::Docker => still_used(request, &config, text),
        Engine::Podman => podman_still_used(text),
        _ => false,
    };
    let new = request
        .engine
        .remove(text, alias)
        .map_err(|why| unparsable(&config, why))?;
    // A file left with nothing of anyone's goes, as registration made it.
    let emptied = new != text && request.engine.holds_nothing(&new);
    let new = old.as_ref().filter(|_| !emptied).map(|_| new);
    let unchanged = format!("holds no registration of {REGISTERED} to take back");
    let changed = apply(request, &config, old.as_deref(), new.as_deref(), &unchanged)?;
    let drop_in = request.engine == Engine::Docker && buildkit_off(request)?;
    if request.engine == Engine::Docker && docker::named_runc(text, new.as_deref()) {
        say!(
            "Left \"default-runtime\": \"{}\" in {}: dockerd keeps a setting that goes \
             missing from the file when it reloads, so the default is named back; the line \
             can go once dockerd has restarted.",
            docker::RUNC,
            config.display()
        );
    }
    // Said once: a library placed in root's copy's folder goes with it.
    let place = roots_place().0;
    let copy_left = reach::left(&place);
    library_left(copy_left.then_some(place.as_path()));
    if (changed || drop_in) && request.dry_run {
        say!("Dry run: nothing written.");
    } else if changed {
        let after = new.as_deref().unwrap_or("");
        let how = format!("containers no longer run through {REGISTERED}");
        tell_reload(request, &config, after, &how);
    }
    Ok(())
}

/// Runs the runtime's `check`, as the file registered, before any file
/// changes (not in a dry run, which writes nothing, not even the library).
fn prove(request: &Request, runtime: &Path) -> Result<(), Error> {
    if request.dry_run {
        say!("Would run {} check first.", runtime.display());
        return Ok(());
    }
    let real = request.real_runtime.as_deref();
    match crate::runtime::check::prove(Path::new("/"), runtime, real) {
        Ok(said) => {
            let ready = said.lines().last().unwrap_or_default();
            say!("{} check: {ready}", runtime.display());
            Ok(())
        }
        Err(why) => Err(Error::Check {
            path: runtime.to_owned(),
            why,
        }),
    }
}

fn unparsable(config: &Path, why: String) -> Error {
    Error::Unparsable {
        file: config.into(),
        why,
    }
}

/// Shows what changes from `old` to `new` (`None`: no file) and, unless
/// a dry run, makes it so; whether anything changes.
fn apply(
    request: &Request,
    path: &Path,
    old: Option<&str>,
    new: Option<&str>,
    unchanged: &str,
) -> Result<bool, Error> {
    if old == new {
        say!("{} {unchanged}; nothing changed.", path.display());
        return Ok(false);
    }
    let label = match request.remove {
        true => format!("without {REGISTERED}"),
        false => format!("with {REGISTERED}"),
    };
    let listing = file::listing(path, old.unwrap_or(""), new.unwrap_or(""), &label);
    say_part!("{listing}");
    match (new, old) {
        _ if request.dry_run => {
            if new.is_none() {
                say!(
                    "Would remove {}: nothing else is left in it.",
                    path.display()
                );
            }
        }
        (Some(new), old) => match file::replace(path, old.map(str::as_bytes), new.as_bytes())? {
            Some(backup) => say!(
                "Wrote {}; the file as it was is in {}.",
                path.display(),
                backup.display()
            ),
            None => say!("Made {}.", path.display()),
        },
        (None, Some(old)) => {
            let backup = file::remove(path, old.as_bytes())?;
            say!(
                "Removed {}: nothing else was left in it; the file as it was is in {}.",
                path.display(),
                backup.display()
            );
        }
        (None, None) => {}
    }
    Ok(true)
}

/// Tells the engine to read `config` again (now `text`), or the user
/// what to do; then `how` containers reach the runtime.
fn tell_reload(request: &Request, config: &Path, text: &str, how: &str) {
    let pid_file = dockerd_pid_file(request, text);
    match reload::reload(request.engine, Path::new("/"), config, &pid_file) {
        Reloaded::Signalled(pid) => say!(
            "Told dockerd (pid {pid}) to reload (SIGHUP): it reads {} again, and no \
             container stops. Now {how}.",
            config.display()
        ),
        Reloaded::Yours(what) => say!("Next: {what}; then {how}."),
    }
}

fn dockerd_pid_file(request: &Request, text: &str) -> PathBuf {
    request
        .pid_file
        .clone()
        .unwrap_or_else(|| reload::docker_pid_file(text))
}

/// Whether containers made with the runtime exist in dockerd's data-root
/// (said, with their names), so that `runtimes.eatmydata` stays as an
/// alias of runc; also when it cannot tell.
fn still_used(request: &Request, config: &Path, text: &str) -> bool {
    let registered = serde_json::from_str::<serde_json::Value>(text)
        .is_ok_and(|v| v["runtimes"].get(REGISTERED).is_some());
    if !registered {
        return false;
    }
    let running = Dockerd::find(&dockerd_pid_file(request, text))
        .ok()
        .filter(|dockerd| dockerd.reads(Path::new("/"), config));
    let data_root = running
        .and_then(|dockerd| dockerd.data_root())
        .or_else(|| docker::setting(text, "data-root").map(PathBuf::from))
        .unwrap_or_else(|| "/var/lib/docker".into());
    let made = inuse::made_with(&data_root, REGISTERED);
    let kept = "Kept runtimes.eatmydata as an alias of runc ({\"path\": \"runc\"})";
    said_kept(made, kept, "dockerd", &data_root.display().to_string())
}

/// As [`still_used`], for podman's containers.
fn podman_still_used(text: &str) -> bool {
    let registered = super::toml::parse(text).is_ok_and(|doc| {
        doc.get("engine")
            .and_then(|engine| engine.get("runtimes"))
            .and_then(|runtimes| runtimes.get(REGISTERED))
            .is_some()
    });
    if !registered {
        return false;
    }
    let made = inuse::podman_made_with(REGISTERED);
    let kept = "Kept [engine.runtimes] eatmydata as an alias of runc";
    said_kept(made, kept, "podman", "podman's store")
}

/// Says which containers keep the name, and whether any does (or it
/// cannot tell, when the name is kept too).
fn said_kept(
    made: std::io::Result<Vec<inuse::Made>>,
    kept: &str,
    engine: &str,
    store: &str,
) -> bool {
    match made {
        Ok(made) if made.is_empty() => false,
        Ok(made) => {
            let names: Vec<String> = made.iter().map(inuse::Made::shown).collect();
            say!(
                "{kept}: {engine} starts these containers, made with it, by that name: {}. \
                 Run --remove again once they are gone.",
                names.join(", ")
            );
            true
        }
        Err(error) => {
            say!(
                "{kept}: cannot tell which containers in {store} were made with it ({}).",
                crate::error::plain(&error)
            );
            true
        }
    }
}

/// With `docker --default`: the drop-in that sends BuildKit's RUN steps
/// through the runtime at `runtime`, where Docker reads it; whether it
/// changes.
fn buildkit_on(request: &Request, runtime: &str) -> Result<bool, Error> {
    let folder = request.systemd_dir.as_deref();
    let path = buildkit::drop_in(folder.unwrap_or(Path::new(buildkit::SYSTEMD_DIR)));
    let major = buildkit::major(request.docker_version.as_deref());
    let version = match major {
        Some(major) if major >= buildkit::FIRST => major,
        _ => {
            let which = major.map_or(
                "Docker's version is unknown (no `dockerd --version`)".into(),
                |v| format!("Docker {v} does not read it"),
            );
            say!(
                "Note: BuildKit, docker build's default builder, runs RUN steps with its own \
                 runc whatever the default runtime; Docker 26 and later can be told \
                 ({}), but {which}. The legacy builder (DOCKER_BUILDKIT=0) goes through \
                 the default runtime.",
                buildkit::VARIABLE
            );
            return Ok(false);
        }
    };
    let old = file::read(&path)?;
    let new = buildkit::text(runtime);
    let unchanged = format!("already sets {}", buildkit::VARIABLE);
    let changed = apply(request, &path, old.as_deref(), Some(&new), &unchanged)?;
    if changed && !request.dry_run {
        say!(
            "BuildKit's RUN steps go through the runtime once dockerd restarts (Docker \
             {version}): systemctl daemon-reload, then systemctl restart docker when \
             convenient (a restart stops running containers; a reload does not read it)."
        );
    }
    Ok(changed)
}

/// Removes BuildKit's drop-in, when there; whether it goes. It is
/// eatmydata's file alone: no backup.
fn buildkit_off(request: &Request) -> Result<bool, Error> {
    let folder = request.systemd_dir.as_deref();
    let path = buildkit::drop_in(folder.unwrap_or(Path::new(buildkit::SYSTEMD_DIR)));
    let Some(old) = file::read(&path)? else {
        return Ok(false);
    };
    let label = format!("without {REGISTERED}");
    say_part!("{}", file::listing(&path, &old, "", &label));
    if request.dry_run {
        say!("Would remove {}.", path.display());
        return Ok(true);
    }
    fs::remove_file(&path).map_err(|error| Error::Io {
        doing: "remove",
        path: path.clone(),
        error,
    })?;
    if let Some(folder) = path.parent() {
        // Only when empty: a folder of other drop-ins stays.
        let _ = fs::remove_dir(folder);
    }
    say!(
        "Removed {}: dockerd drops {} at its next restart (systemctl daemon-reload first).",
        path.display(),
        buildkit::VARIABLE
    );
    Ok(true)
}
