"""rollout_compose: the docker-compose.yaml of a Harbor task, for proctor-rollout.

Owns reading environment/docker-compose.yaml (Harbor's multi-container
shape: the service "main" is the agent's container, every other service a
sibling) and running the siblings as plain podman containers next to the
rollout: connected services on a per-run podman network, each reached from
inside the rollout as a peer (policy "peers", docs/rollout.md) under its
service name; a service with `network_mode: none` gets no network at all,
so nothing in the rollout (agent or verifier) can reach it.

Only the subset of the Compose specification (compose-spec.io, "Services
top-level element") a task needs is read; every other key is refused or
warned about by name, never silently dropped.  YAML is parsed with
python3-yaml (Debian's package), the driver's only non-stdlib module, and
only for compose tasks.
"""

import os
import re

SERVICE_KEYS = {"image", "build", "environment", "command", "entrypoint", "expose",
                "ports", "network_mode", "depends_on", "container_name", "hostname",
                "restart", "healthcheck", "init", "working_dir", "user"}
WARNED_KEYS = {"container_name", "hostname", "restart", "healthcheck", "init"}
MAIN_KEYS = {"build", "image", "environment", "depends_on", "command", "entrypoint",
             "network_mode", "working_dir", "expose", "ports", "healthcheck", "init", "restart"}
DNS_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


class ComposeError(Exception):
    """The compose file contradicts itself or asks for what is not supported."""


def _env_of(v, where, expand):
    """Compose's environment: a mapping or a list of NAME=VALUE."""
    if v is None:
        return {}
    if isinstance(v, dict):
        return {str(k): expand("" if x is None else str(x), f"{where}.{k}") for k, x in v.items()}
    if isinstance(v, list):
        out = {}
        for item in v:
            name, eq, val = str(item).partition("=")
            if not eq:
                raise ComposeError(f"{where}: {item!r}: expected NAME=VALUE")
            out[name] = expand(val, f"{where}.{name}")
        return out
    raise ComposeError(f"{where}: expected a mapping or a list")


def _argv_of(v, where):
    if v is None:
        return None
    if isinstance(v, str):
        import shlex
        return shlex.split(v)
    if isinstance(v, list) and all(isinstance(x, (str, int)) for x in v):
        return [str(x) for x in v]
    raise ComposeError(f"{where}: expected a string or a list of strings")


def _ports_of(svc, where):
    """Container-side TCP ports from expose ("5432", 5432, "5432/tcp") and
    ports ("8080:80", "127.0.0.1:8080:80", "80"); a udp port is an error."""
    out = []
    for key in ("expose", "ports"):
        for item in svc.get(key) or []:
            s = str(item.get("target") if isinstance(item, dict) else item)
            port, _, proto = s.partition("/")
            if proto and proto != "tcp":
                raise ComposeError(f"{where}.{key}: {item!r}: only tcp ports can be peers")
            port = port.rsplit(":", 1)[-1]
            if not port.isdigit() or not 1 <= int(port) <= 65535:
                raise ComposeError(f"{where}.{key}: {item!r}: not a port (1-65535)")
            if int(port) not in out:
                out.append(int(port))
    return out


class Service:
    def __init__(self, name, spec, base_dir, expand, warn):
        where = f"services.{name}"
        if not isinstance(spec, dict):
            raise ComposeError(f"{where}: expected a mapping")
        self.name = name
        for k in spec:
            if str(k).startswith("x-"):
                continue
            if k not in SERVICE_KEYS:
                raise ComposeError(f"{where}.{k}: not supported by proctor-rollout")
            if k in WARNED_KEYS:
                warn(f"compose {where}.{k}: ignored")
        mode = spec.get("network_mode")
        if mode in (None, "bridge", "default"):
            self.isolated = False
        elif mode == "none":
            self.isolated = True
        else:
            raise ComposeError(f"{where}.network_mode: {mode!r}: expected none or bridge "
                               "(host, service: and container: would share a network namespace)")
        self.image = expand(spec["image"], f"{where}.image") if spec.get("image") else None
        self.build = None
        b = spec.get("build")
        if b is not None:
            ctx, df = (b, None) if isinstance(b, str) else (b.get("context", "."), b.get("dockerfile"))
            if not isinstance(b, (str, dict)):
                raise ComposeError(f"{where}.build: expected a path or a mapping")
            ctx = os.path.normpath(os.path.join(base_dir, str(ctx)))
            if not os.path.isdir(ctx):
                raise ComposeError(f"{where}.build: context {ctx} is not a directory")
            df = os.path.join(ctx, df) if df else next(
                (os.path.join(ctx, n) for n in ("Dockerfile", "Containerfile")
                 if os.path.isfile(os.path.join(ctx, n))), None)
            if not df or not os.path.isfile(df):
                raise ComposeError(f"{where}.build: no Dockerfile in {ctx}")
            self.build = (ctx, df)
        self.env = _env_of(spec.get("environment"), f"{where}.environment", expand)
        self.command = _argv_of(spec.get("command"), f"{where}.command")
        self.entrypoint = _argv_of(spec.get("entrypoint"), f"{where}.entrypoint")
        self.user = str(spec["user"]) if spec.get("user") is not None else None
        self.workdir = str(spec["working_dir"]) if spec.get("working_dir") else None
        self.ports = _ports_of(spec, where)
        dep = spec.get("depends_on") or []
        if isinstance(dep, dict):
            dep = list(dep)
        if not isinstance(dep, list):
            raise ComposeError(f"{where}.depends_on: expected a list or a mapping")
        self.depends_on = [str(d) for d in dep]


class Compose:
    """The parsed compose file: self.main (the "main" service's spec, or
    None), self.services (the siblings by name, in start order)."""

    def __init__(self, path, expand, warn):
        try:
            import yaml
        except ImportError:
            raise ComposeError("compose tasks need python3-yaml (apt-get install python3-yaml)")
        self.path = path
        base = os.path.dirname(path)
        try:
            with open(path, encoding="utf-8") as f:
                doc = yaml.safe_load(f)
        except (OSError, yaml.YAMLError) as e:
            raise ComposeError(f"{os.path.basename(path)}: {e}")
        if not isinstance(doc, dict) or not isinstance(doc.get("services"), dict) or not doc["services"]:
            raise ComposeError("expected a top-level services: mapping with at least one service")
        for k, v in doc.items():
            if k in ("services", "version", "name") or str(k).startswith("x-"):
                continue
            if k in ("networks", "volumes", "configs", "secrets") and not v:
                continue
            raise ComposeError(f"top-level {k}: not supported by proctor-rollout")
        self.main = None
        sibs = {}
        for name, spec in doc["services"].items():
            name = str(name)
            if name == "main":
                self.main = self._main(spec, base, expand, warn)
                continue
            if not DNS_LABEL.match(name):
                raise ComposeError(f"services.{name}: a service name must be a DNS label "
                                   "(lower-case letters, digits, '-'): it is the peer's host name")
            sibs[name] = Service(name, spec, base, expand, warn)
            if not sibs[name].image and not sibs[name].build:
                raise ComposeError(f"services.{name}: needs image or build")
        known = set(sibs) | {"main"}
        for s in sibs.values():
            for d in s.depends_on:
                if d not in known:
                    raise ComposeError(f"services.{s.name}.depends_on: unknown service {d!r}")
                if d == "main":
                    raise ComposeError(f"services.{s.name}.depends_on: main starts after the services")
        if self.main:
            for d in self.main["depends_on"]:
                if d not in sibs:
                    raise ComposeError(f"services.main.depends_on: unknown service {d!r}")
        self.services = self._order(sibs)

    @staticmethod
    def _main(spec, base, expand, warn):
        if not isinstance(spec, dict):
            raise ComposeError("services.main: expected a mapping")
        for k in spec:
            if str(k).startswith("x-"):
                continue
            if k not in MAIN_KEYS:
                raise ComposeError(f"services.main.{k}: not supported by proctor-rollout")
            if k in ("command", "entrypoint", "healthcheck", "init", "restart", "expose", "ports"):
                warn(f"compose services.main.{k}: ignored (the driver starts the rollout "
                     "container; use [environment] healthcheck)")
        mode = spec.get("network_mode")
        if mode not in (None, "bridge", "default"):
            raise ComposeError(f"services.main.network_mode: {mode!r}: the rollout's network is "
                               "task.toml's ([environment] network_mode / allow_internet)")
        out = {"env": _env_of(spec.get("environment"), "services.main.environment", expand),
               "depends_on": [str(d) for d in (list(spec.get("depends_on") or []))],
               "image": expand(spec["image"], "services.main.image") if spec.get("image") else None,
               "build": None}
        b = spec.get("build")
        if b is not None:
            ctx = os.path.normpath(os.path.join(base, str(b if isinstance(b, str) else b.get("context", "."))))
            df = None if isinstance(b, str) else b.get("dockerfile")
            out["build"] = (ctx, os.path.join(ctx, df or "Dockerfile"))
        return out

    @staticmethod
    def _order(sibs):
        """depends_on order; a cycle is an error."""
        done, order, busy = set(), [], set()

        def visit(n, chain):
            if n in done:
                return
            if n in busy:
                raise ComposeError("depends_on cycle: " + " -> ".join(chain + [n]))
            busy.add(n)
            for d in sibs[n].depends_on:
                visit(d, chain + [n])
            busy.discard(n)
            done.add(n)
            order.append(sibs[n])
        for n in sibs:
            visit(n, [])
        return order

    def connected(self):
        return [s for s in self.services if not s.isolated]

    def isolated(self):
        return [s for s in self.services if s.isolated]
