//! The build-step barrier (`src/wrapper/runtime/barrier.rs`) acts on what
//! the engine's side asked for and named at `create`, never on what the
//! container put in place since. Security review 3 (issue 45) found it
//! following a link a container planted in place of a bind's source, and
//! turned on by the container's environment (an image's `ENV
//! EATMYDATA_BARRIER=1`). Through runc, as BuildKit's executor runs a step
//! (`run` in the foreground) and as any engine creates a container.

use std::fs;
use std::process::Stdio;

use serde_json::{Value, json};

use super::{Bundle, Container, Via, inside, new_id, text};
use crate::common::probe;
use crate::loopfs::LoopFs;

const ANNOTATION: &str = "io.eatmydata.barrier";

/// A step whose volume gives it the folder above another bind's source
/// puts a link there to a folder of the host's: the barrier at its end
/// flushes the rest, and says it could not reach that one (a link where
/// the create found a folder). Before, it followed the link.
#[test]
fn a_link_planted_in_place_of_a_bind_source_is_not_followed() {
    let data = LoopFs::new("runtime-barrier-link", 16);
    let plant = probe("plant_link", &["-static"]);
    let bundle = Bundle::new("runtime-barrier-link", &[&plant], &data);
    let (volume, host_only) = (bundle.dir.join("volume"), bundle.dir.join("host-only"));
    fs::create_dir_all(volume.join("sub")).unwrap();
    fs::create_dir(&host_only).unwrap();
    let log = bundle.dir.join("runtime.log");
    let plant = inside(&plant);
    let args = [plant.as_str(), "/vol/sub", host_only.to_str().unwrap()];
    bundle.write_spec(&args, |spec| {
        let mounts = spec["mounts"].as_array_mut().unwrap();
        for (destination, source) in [("/vol", volume.clone()), ("/sub", volume.join("sub"))] {
            mounts.push(json!({
                "destination": destination, "type": "bind",
                "source": source, "options": ["rbind", "rw"]
            }));
        }
        spec["annotations"] = json!({ANNOTATION: "1"});
    });
    let output = bundle
        .command(Via::Ours("runc"), Some(&log))
        .args(["run", "--bundle"])
        .arg(bundle.dir.path())
        .arg(new_id())
        .stdin(Stdio::null())
        .output()
        .expect("run the runtime");
    assert!(output.status.success(), "{}", text(&output));
    let planted = fs::read_link(volume.join("sub")).expect("the step planted its link");
    assert_eq!(planted, host_only);
    let log = fs::read_to_string(&log).unwrap();
    let barrier = log
        .lines()
        .find(|line| line.contains("barrier, syncfs of"))
        .unwrap_or_else(|| panic!("no barrier in the log: {log}"));
    let refused = format!("not flushed: {}/sub (", volume.display());
    assert!(barrier.contains(&refused), "followed the link: {barrier}");
    assert!(!barrier.contains("syncfs of 0 file"), "{barrier}");
}

/// The container's environment has no say on the barrier: a container
/// created with `EATMYDATA_BARRIER=1` there (as an image's `ENV` puts it)
/// is not marked for one; the engine's annotation, beside it, is.
#[test]
fn the_container_s_environment_does_not_ask_for_the_barrier() {
    let data = LoopFs::new("runtime-barrier-env", 16);
    let hold = probe("hold", &["-static"]);
    let bundle = Bundle::new("runtime-barrier-env", &[&hold], &data);
    let marked = |change: &dyn Fn(&mut Value)| {
        bundle.write_spec(&[&inside(&hold)], change);
        let id = new_id();
        let status = bundle
            .command(Via::Ours("runc"), None)
            .args(["create", "--bundle"])
            .arg(bundle.dir.path())
            .arg(&id)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run the runtime");
        let spec: Value = serde_json::from_slice(&fs::read(bundle.config()).unwrap()).unwrap();
        Container::gone(&bundle, Via::Ours("runc"), &id);
        assert!(status.success(), "create");
        spec["annotations"][ANNOTATION].as_str().map(str::to_owned)
    };
    let env = marked(&|spec| {
        let env = spec["process"]["env"].as_array_mut().unwrap();
        env.push(json!("EATMYDATA_BARRIER=1"));
    });
    assert_eq!(
        env, None,
        "the container's environment asked for the barrier"
    );
    let annotated = marked(&|spec| spec["annotations"] = json!({ANNOTATION: "1"}));
    assert_eq!(annotated.as_deref(), Some("asked"));
}
