//! What is already at the temporary place a user's command writes the
//! library to is never used unless it is a regular file of theirs,
//! writable by them alone, with the carried bytes: a planted link,
//! someone else's file, a file with other bytes are replaced, and a
//! folder that is a link or someone else's is left for a private one.
//! Each case changes one thing only, so that the one check it names is
//! what refuses it. The caller is `USER`; the someone else, `nobody`.
//! Each test's place is in a chain of root's folders
//! (`TempDir::trusted`): the command rightly passes over a `TMPDIR` below
//! a folder another user owns, as a checkout in someone's home is.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, chown, symlink};

use super::{NOBODY, USER, as_user, eats_with, fsyncs_alone, lonely, place, written_in};
use crate::common::{Run, TempDir, probe};

/// The carried library's bytes, as a run in a place of its own writes them.
fn carried_bytes(dir: &TempDir) -> Vec<u8> {
    let place = place(dir);
    let eatmydata = lonely(dir);
    let printed = as_user(USER)
        .arg(&eatmydata)
        .arg("--print-library")
        .env("TMPDIR", &place)
        .run()
        .success();
    let path = written_in(&place, USER);
    assert_eq!(printed.stdout().trim_end(), path.to_string_lossy());
    let bytes = fs::read(&path).unwrap();
    fs::remove_dir_all(path.parent().unwrap()).unwrap();
    bytes
}

#[test]
fn a_planted_link_is_replaced_not_followed() {
    let dir = TempDir::trusted("planted-link");
    let bytes = carried_bytes(&dir);
    let (place, eatmydata) = (place(&dir), lonely(&dir));
    let target = written_in(&place, USER);
    fs::create_dir_all(target.parent().unwrap()).unwrap();
    chown(target.parent().unwrap(), Some(USER), Some(USER)).unwrap();
    // The link leads to the right bytes, in a file of ours: only the link
    // itself is wrong (whoever made it could point it elsewhere later).
    let elsewhere = dir.join("elsewhere.so");
    fs::write(&elsewhere, &bytes).unwrap();
    chown(&elsewhere, Some(USER), Some(USER)).unwrap();
    symlink(&elsewhere, &target).unwrap();

    fsyncs_alone(&dir.join("plain"));
    let eaten = eats_with(&eatmydata, &place, &dir.join("eaten"));
    assert!(
        eaten
            .stderr()
            .contains(&format!("{} preloaded", target.display())),
        "{}",
        eaten.stderr()
    );
    let meta = fs::symlink_metadata(&target).unwrap();
    assert!(meta.file_type().is_file(), "the link is still there");
    assert_eq!(fs::read(&target).unwrap(), bytes);
    assert_eq!(
        fs::read(&elsewhere).unwrap(),
        bytes,
        "the link's target was written"
    );
}

#[test]
fn a_file_of_someone_elses_is_replaced() {
    let dir = TempDir::trusted("planted-owner");
    let bytes = carried_bytes(&dir);
    let (place, eatmydata) = (place(&dir), lonely(&dir));
    let target = written_in(&place, USER);
    fs::create_dir_all(target.parent().unwrap()).unwrap();
    chown(target.parent().unwrap(), Some(USER), Some(USER)).unwrap();
    // The right bytes and mode, but nobody's: nobody could change them
    // between our check and the loader's open.
    fs::write(&target, &bytes).unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o644)).unwrap();
    chown(&target, Some(NOBODY), Some(NOBODY)).unwrap();
    let planted = fs::metadata(&target).unwrap().ino();

    fsyncs_alone(&dir.join("plain"));
    let eaten = eats_with(&eatmydata, &place, &dir.join("eaten"));
    assert!(
        eaten.stderr().contains("written out now"),
        "{}",
        eaten.stderr()
    );
    let meta = fs::metadata(&target).unwrap();
    assert_eq!(meta.uid(), USER, "still nobody's file");
    assert_ne!(meta.ino(), planted, "the planted file was kept");
    assert_eq!(fs::read(&target).unwrap(), bytes);
}

#[test]
fn a_file_with_other_bytes_is_never_loaded() {
    let dir = TempDir::trusted("planted-bytes");
    let length = carried_bytes(&dir).len() as u64;
    let (place, eatmydata) = (place(&dir), lonely(&dir));
    let target = written_in(&place, USER);
    fs::create_dir_all(target.parent().unwrap()).unwrap();
    chown(target.parent().unwrap(), Some(USER), Some(USER)).unwrap();
    // Ours, mode 0644, and as long as the real one: only the bytes differ.
    let decoy = probe("decoy_lib", &["-shared", "-fPIC"]);
    fs::copy(&decoy, &target).unwrap();
    fs::OpenOptions::new()
        .write(true)
        .open(&target)
        .unwrap()
        .set_len(length)
        .unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o644)).unwrap();
    chown(&target, Some(USER), Some(USER)).unwrap();

    // The control: loaded, the decoy says so.
    let loaded = Run::new(probe("sync_calls", &[]))
        .arg(dir.join("decoy"))
        .env("LD_PRELOAD", &target)
        .run()
        .success();
    assert!(
        loaded.stderr().contains("decoy library loaded"),
        "{}",
        loaded.stderr()
    );

    fsyncs_alone(&dir.join("plain"));
    let eaten = eats_with(&eatmydata, &place, &dir.join("eaten"));
    assert!(!eaten.stderr().contains("decoy"), "{}", eaten.stderr());
    assert!(
        eaten.stderr().contains("written out now"),
        "{}",
        eaten.stderr()
    );
    assert_eq!(fs::read(&target).unwrap().len() as u64, length);
    assert!(
        !fs::read(&target)
            .unwrap()
            .starts_with(&fs::read(&decoy).unwrap())
    );
}

#[test]
fn a_folder_that_is_a_link_or_someone_elses_is_left_for_a_private_one() {
    let dir = TempDir::trusted("planted-folder");
    let eatmydata = lonely(&dir);
    let decoy = probe("decoy_lib", &["-shared", "-fPIC"]);
    // Each place, the user's, holds the decoy under the right name, in a
    // folder that is nobody's, or a link to a folder of the user's.
    let nobodys = dir.join("nobodys");
    let folder = written_in(&nobodys, USER);
    fs::create_dir_all(folder.parent().unwrap()).unwrap();
    fs::copy(&decoy, &folder).unwrap();
    chown(folder.parent().unwrap(), Some(NOBODY), Some(NOBODY)).unwrap();
    chown(&folder, Some(NOBODY), Some(NOBODY)).unwrap();

    let linked = dir.join("linked");
    let ours = dir.join("ours");
    fs::create_dir_all(&linked).unwrap();
    fs::create_dir_all(&ours).unwrap();
    let name = written_in(&linked, USER);
    fs::copy(&decoy, ours.join(name.file_name().unwrap())).unwrap();
    symlink(&ours, name.parent().unwrap()).unwrap();
    for place in [&nobodys, &linked, &ours] {
        fs::set_permissions(place, fs::Permissions::from_mode(0o755)).unwrap();
        chown(place, Some(USER), Some(USER)).unwrap();
    }

    fsyncs_alone(&dir.join("plain"));
    for place in [&nobodys, &linked] {
        let eaten = eats_with(&eatmydata, place, &dir.join("eaten"));
        let stderr = eaten.stderr();
        assert!(!stderr.contains("decoy"), "{stderr}");
        // A private folder of the user's in the same place served.
        let private = format!(" {}/eatmydata-{USER}.", place.display());
        assert!(stderr.contains(&private), "{stderr}");
        assert!(stderr.contains("in a private folder"), "{stderr}");
    }
    assert_eq!(
        fs::read(ours.join(name.file_name().unwrap())).unwrap(),
        fs::read(&decoy).unwrap()
    );
}
