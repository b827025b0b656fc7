// A container as `docker inspect` describes it, read back into the
// `docker create` options that make it again; and the check that the
// copy Docker made is the original, field for field. Pure functions of
// the inspect JSON: services.js runs Docker.
//
// What the runner gives a service (its `docker create` line: a bare
// hexadecimal label, `--network github_network_<hex>`, `--network-alias`,
// `-p PORT` without a host port, `-e`, `-v`, and the workflow's
// `options:`, which may be any `docker create` option) is read from the
// container's config, host config, mounts and network, each field
// turned into its option. A field no option here gives makes the copy
// differ; `differences` then names it and the service is left alone.
'use strict';

// The label the runner puts on what it makes: a key of six hexadecimal
// digits (of its own folder's hash), with no value.
const RUNNER_LABEL = /^[0-9a-f]{6}$/i;
const JOB_NETWORK = /^github_network_[0-9a-f]{32}$/i;

class Unreadable extends Error {}

// Whether two fields hold the same, an empty list or map being no value
// (Docker writes either, depending on when and how it was asked).
function same(a, b) {
  const value = (x) => (x === undefined || (typeof x === 'object' && x !== null && Object.keys(x).length === 0) ? null : x);
  return JSON.stringify(value(a)) === JSON.stringify(value(b));
}

// The network aliases a user (the runner) gave: Docker before 25 adds the
// container's short id (and its hostname) at start.
function givenAliases(info, endpoint) {
  const own = [info.Id.slice(0, 12), info.Config.Hostname];
  return (endpoint.Aliases || []).filter((alias) => !own.includes(alias));
}

// {label, network, alias, aliases} of a job's service container, or
// null; label is the runner's (each runner on a host has its own).
function serviceOf(info) {
  const config = info.Config || {};
  const labels = config.Labels || {};
  const label = Object.keys(labels).find((key) => RUNNER_LABEL.test(key) && labels[key] === '');
  if (label === undefined || !info.State || !info.State.Running) return null;
  const networks = Object.entries((info.NetworkSettings && info.NetworkSettings.Networks) || {});
  const job = networks.filter(([name]) => JOB_NETWORK.test(name));
  if (job.length !== 1) return null;
  const [network, endpoint] = job[0];
  const aliases = givenAliases(info, endpoint);
  if (aliases.length === 0) return null; // the job container: no alias
  return { label, network, alias: aliases[0], aliases };
}

// The host ports each published port got: {"5432/tcp": "32768"}.
function hostPorts(info) {
  const ports = {};
  for (const [port, bindings] of Object.entries((info.NetworkSettings && info.NetworkSettings.Ports) || {})) {
    if (bindings && bindings.length > 0) ports[port] = bindings[0].HostPort;
  }
  return ports;
}

// The port bindings with each host port the runner left to Docker (`-p
// 5432`) as Docker chose it when the service started.
function boundPorts(info) {
  const resolved = (info.NetworkSettings && info.NetworkSettings.Ports) || {};
  const bound = {};
  for (const [port, bindings] of Object.entries(info.HostConfig.PortBindings || {})) {
    bound[port] = (bindings || []).map((binding) => {
      let host = binding.HostPort || '';
      if (host === '') {
        const got = (resolved[port] || []).find((r) => !binding.HostIp || r.HostIp === binding.HostIp);
        if (!got) throw new Unreadable(`port ${port} has no host port published`);
        host = got.HostPort;
      }
      if (!/^[0-9]+$/.test(host)) throw new Unreadable(`port ${port} is published on host ports ${host}`);
      return { HostIp: binding.HostIp || '', HostPort: host };
    });
  }
  return bound;
}

// Options that are a list: one option per element.
const LISTS = [
  ['CapAdd', '--cap-add'],
  ['CapDrop', '--cap-drop'],
  ['Dns', '--dns'],
  ['DnsOptions', '--dns-option'],
  ['DnsSearch', '--dns-search'],
  ['ExtraHosts', '--add-host'],
  ['GroupAdd', '--group-add'],
  ['SecurityOpt', '--security-opt'],
  ['VolumesFrom', '--volumes-from'],
  ['DeviceCgroupRules', '--device-cgroup-rule'],
];

// Options that are one value, given when it is not the empty default.
const VALUES = [
  ['IpcMode', '--ipc'],
  ['PidMode', '--pid'],
  ['UTSMode', '--uts'],
  ['UsernsMode', '--userns'],
  ['CgroupnsMode', '--cgroupns'],
  ['OomScoreAdj', '--oom-score-adj'],
  ['ShmSize', '--shm-size'],
  ['CpuShares', '--cpu-shares'],
  ['Memory', '--memory'],
  ['MemoryReservation', '--memory-reservation'],
  ['MemorySwap', '--memory-swap'],
  ['CgroupParent', '--cgroup-parent'],
  ['VolumeDriver', '--volume-driver'],
  ['BlkioWeight', '--blkio-weight'],
  ['CpuPeriod', '--cpu-period'],
  ['CpuQuota', '--cpu-quota'],
  ['CpuRealtimePeriod', '--cpu-rt-period'],
  ['CpuRealtimeRuntime', '--cpu-rt-runtime'],
  ['CpusetCpus', '--cpuset-cpus'],
  ['CpusetMems', '--cpuset-mems'],
];

// Switches, given when true.
const SWITCHES = [
  ['Privileged', '--privileged'],
  ['ReadonlyRootfs', '--read-only'],
  ['OomKillDisable', '--oom-kill-disable'],
  ['Init', '--init'],
];

// Device lists as `PATH:VALUE`.
const DEVICE_LIMITS = [
  ['BlkioWeightDevice', '--blkio-weight-device', 'Weight'],
  ['BlkioDeviceReadBps', '--device-read-bps', 'Rate'],
  ['BlkioDeviceWriteBps', '--device-write-bps', 'Rate'],
  ['BlkioDeviceReadIOps', '--device-read-iops', 'Rate'],
  ['BlkioDeviceWriteIOps', '--device-write-iops', 'Rate'],
];

function hostOptions(host, add) {
  for (const [field, flag] of LISTS) {
    for (const value of host[field] || []) {
      if (field === 'SecurityOpt' && /^seccomp[=:]\s*\{/.test(value)) {
        throw new Unreadable('it has a seccomp profile of its own');
      }
      add(flag, value);
    }
  }
  for (const [field, flag] of VALUES) {
    const value = host[field];
    if (value !== undefined && value !== null && value !== '' && value !== 0) add(flag, value);
  }
  for (const [field, flag] of SWITCHES) if (host[field]) add(flag);
  for (const [field, flag, key] of DEVICE_LIMITS) {
    for (const limit of host[field] || []) add(flag, `${limit.Path}:${limit[key]}`);
  }
  if (host.NanoCpus) add('--cpus', host.NanoCpus / 1e9);
  if (typeof host.MemorySwappiness === 'number' && host.MemorySwappiness >= 0) {
    add('--memory-swappiness', host.MemorySwappiness);
  }
  if (typeof host.PidsLimit === 'number' && host.PidsLimit > 0) add('--pids-limit', host.PidsLimit);
  const restart = host.RestartPolicy || {};
  if (restart.Name && restart.Name !== 'no') {
    add('--restart', restart.Name === 'on-failure' ? `on-failure:${restart.MaximumRetryCount}` : restart.Name);
  }
  if (host.AutoRemove) throw new Unreadable('it is removed when it stops (--rm), so it could not be kept');
  if ((host.Links || []).length > 0) throw new Unreadable('it has legacy links (--link)');
  if ((host.DeviceRequests || []).length > 0) throw new Unreadable('it asks for devices such as GPUs (--gpus)');
  if (host.PublishAllPorts) throw new Unreadable('it publishes all its ports (-P), which would get new host ports');
  const log = host.LogConfig || {};
  if (log.Type) add('--log-driver', log.Type);
  for (const [key, value] of Object.entries(log.Config || {})) add('--log-opt', `${key}=${value}`);
  for (const [path, options] of Object.entries(host.Tmpfs || {})) add('--tmpfs', options ? `${path}:${options}` : path);
  for (const [key, value] of Object.entries(host.Sysctls || {})) add('--sysctl', `${key}=${value}`);
  for (const limit of host.Ulimits || []) add('--ulimit', `${limit.Name}=${limit.Soft}:${limit.Hard}`);
  for (const device of host.Devices || []) {
    add('--device', `${device.PathOnHost}:${device.PathInContainer}:${device.CgroupPermissions}`);
  }
}

// A `--mount` given at creation, with an anonymous volume named as
// Docker named it, so that the copy has its data.
function mountOption(mount, mounts) {
  const parts = [`type=${mount.Type}`];
  let source = mount.Source;
  if (!source && mount.Type === 'volume') {
    const made = mounts.find((m) => m.Destination === mount.Target);
    if (made) source = made.Name;
  }
  if (source) parts.push(`source=${source}`);
  parts.push(`target=${mount.Target}`);
  if (mount.ReadOnly) parts.push('readonly');
  const bind = mount.BindOptions || {};
  if (bind.Propagation) parts.push(`bind-propagation=${bind.Propagation}`);
  const volume = mount.VolumeOptions || {};
  if (volume.NoCopy) parts.push('volume-nocopy');
  const tmpfs = mount.TmpfsOptions || {};
  if (tmpfs.SizeBytes) parts.push(`tmpfs-size=${tmpfs.SizeBytes}`);
  if (tmpfs.Mode) parts.push(`tmpfs-mode=${tmpfs.Mode.toString(8)}`);
  if (parts.some((part) => part.includes(','))) throw new Unreadable(`its mount ${mount.Target} has a comma in it`);
  return parts.join(',');
}

// Where each bind (`-v SOURCE:TARGET[:MODE]`) goes.
function bindTarget(bind) {
  const parts = bind.split(':');
  return parts.length >= 3 && !parts[parts.length - 1].startsWith('/') ? parts[parts.length - 2] : parts[parts.length - 1];
}

function volumeOptions(info, add) {
  const host = info.HostConfig;
  const mounts = info.Mounts || [];
  const given = new Set();
  for (const bind of host.Binds || []) {
    add('--volume', bind);
    given.add(bindTarget(bind));
  }
  for (const mount of host.Mounts || []) {
    add('--mount', mountOption(mount, mounts));
    given.add(mount.Target);
  }
  // The anonymous volumes (the image's VOLUME, `-v /PATH`): the same
  // volume, by name, so that the copy finds what the original wrote.
  for (const mount of mounts) {
    if (mount.Type !== 'volume' || given.has(mount.Destination)) continue;
    add('--volume', `${mount.Name}:${mount.Destination}${mount.RW === false ? ':ro' : ''}`);
  }
}

// Go's duration, in nanoseconds as Docker keeps it.
function duration(ns) {
  return `${ns}ns`;
}

function healthOptions(config, image, add) {
  const check = config.Healthcheck || null;
  const own = image.Healthcheck || null;
  if (same(check, own) || !check) return;
  const [kind, ...command] = check.Test || [];
  if (kind === 'NONE') {
    add('--no-healthcheck');
    return;
  }
  if (kind === 'CMD-SHELL') add('--health-cmd', command.join(' '));
  else if (kind !== undefined && !(own && same(check.Test, own.Test))) {
    throw new Unreadable('its health check is a command list (CMD), which --health-cmd cannot give');
  }
  if (check.Interval) add('--health-interval', duration(check.Interval));
  if (check.Timeout) add('--health-timeout', duration(check.Timeout));
  if (check.StartPeriod) add('--health-start-period', duration(check.StartPeriod));
  if (check.StartInterval) add('--health-start-interval', duration(check.StartInterval));
  if (check.Retries) add('--health-retries', check.Retries);
}

// The `docker create` arguments (options, image, command) that make
// `info` again, given its image's inspect; `--name` and `--runtime` are
// the caller's. Throws Unreadable for what no option can give.
function createArgs(info, image) {
  const config = info.Config;
  const own = (image && image.Config) || {};
  const args = [];
  const add = (flag, value) => {
    args.push(flag);
    if (value !== undefined) args.push(String(value));
  };
  const service = serviceOf(info);
  if (!service) throw new Unreadable('it is not on the job network with an alias');
  add('--network', service.network);
  for (const alias of service.aliases) add('--network-alias', alias);
  const endpoint = info.NetworkSettings.Networks[service.network];
  const ipam = endpoint.IPAMConfig || {};
  if (ipam.IPv4Address) add('--ip', ipam.IPv4Address);
  if (ipam.IPv6Address) add('--ip6', ipam.IPv6Address);
  add('--hostname', config.Hostname);
  if (config.Domainname) add('--domainname', config.Domainname);
  if ((config.User || '') !== (own.User || '')) add('--user', config.User);
  if ((config.WorkingDir || '') !== (own.WorkingDir || '')) add('--workdir', config.WorkingDir);
  // The image's own variables come from the image again.
  const imageEnv = new Set(own.Env || []);
  for (const variable of config.Env || []) if (!imageEnv.has(variable)) add('--env', variable);
  const imageLabels = own.Labels || {};
  for (const [key, value] of Object.entries(config.Labels || {})) {
    if (imageLabels[key] !== value) add('--label', `${key}=${value}`);
  }
  for (const port of Object.keys(config.ExposedPorts || {})) add('--expose', port);
  if (config.Tty) add('--tty');
  if (config.OpenStdin) add('--interactive');
  healthOptions(config, own, add);
  if (config.StopSignal && config.StopSignal !== own.StopSignal) add('--stop-signal', config.StopSignal);
  if (typeof config.StopTimeout === 'number') add('--stop-timeout', config.StopTimeout);
  for (const [port, bindings] of Object.entries(boundPorts(info))) {
    for (const binding of bindings) {
      const ip = binding.HostIp.includes(':') ? `[${binding.HostIp}]:` : binding.HostIp ? `${binding.HostIp}:` : '';
      add('--publish', `${ip}${binding.HostPort}:${port}`);
    }
  }
  volumeOptions(info, add);
  hostOptions(info.HostConfig, add);
  const entrypoint = !same(config.Entrypoint, own.Entrypoint);
  if (entrypoint) {
    const words = config.Entrypoint || [];
    if (words.length > 1) throw new Unreadable('its entry point has several words, which --entrypoint cannot give');
    add('--entrypoint', words.length === 1 ? words[0] : '');
  }
  args.push(config.Image);
  // An entry point given drops the image's command: give it again.
  if (entrypoint || !same(config.Cmd, own.Cmd)) args.push(...(config.Cmd || []));
  return args;
}

// What a container's mounts are: type, volume name or host path,
// target, and whether it is writable.
function mountsOf(info) {
  return (info.Mounts || [])
    .map((m) => [m.Type, m.Type === 'volume' ? m.Name : m.Source, m.Destination, m.RW].join(' '))
    .sort();
}

// Its networks and the aliases given on each.
function networksOf(info) {
  const networks = {};
  for (const [name, endpoint] of Object.entries((info.NetworkSettings && info.NetworkSettings.Networks) || {})) {
    networks[name] = { aliases: givenAliases(info, endpoint).sort(), ipam: endpoint.IPAMConfig || null };
  }
  return networks;
}

// The fields in which `copy` (created, not started) differs from
// `original`, beyond those it must differ in: its runtime, and where its
// volumes and host ports were written (both are compared as results:
// the mounts it has, the host ports it binds).
function differences(original, copy, runtime) {
  const found = [];
  if (original.Image !== copy.Image) found.push('Image');
  for (const part of ['Config', 'HostConfig']) {
    const ignored =
      part === 'Config'
        ? ['Volumes']
        : ['Runtime', 'Binds', 'Mounts', 'PortBindings', 'ContainerIDFile'];
    // The environment is a set: a program sees no order in it.
    const sorted = (x) => (part === 'Config' ? { ...x, Env: [...(x.Env || [])].sort() } : x);
    const a = sorted(original[part] || {});
    const b = sorted(copy[part] || {});
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!ignored.includes(key) && !same(a[key], b[key])) found.push(`${part}.${key}`);
    }
  }
  if (copy.HostConfig.Runtime !== runtime) found.push('HostConfig.Runtime');
  let bound;
  try {
    bound = boundPorts(original);
  } catch {
    bound = null;
  }
  if (!same(bound, copy.HostConfig.PortBindings || {})) found.push('HostConfig.PortBindings');
  if (!same(mountsOf(original), mountsOf(copy))) found.push('Mounts');
  const [was, is] = [networksOf(original), networksOf(copy)];
  if (!same(Object.keys(was).sort(), Object.keys(is).sort())) found.push('NetworkSettings.Networks');
  else {
    for (const name of Object.keys(was)) {
      if (!same(was[name].aliases, is[name].aliases)) found.push(`NetworkSettings.Networks.${name}.Aliases`);
      if (!same(was[name].ipam, is[name].ipam)) found.push(`NetworkSettings.Networks.${name}.IPAMConfig`);
    }
  }
  return found;
}

module.exports = { Unreadable, createArgs, differences, hostPorts, serviceOf };
