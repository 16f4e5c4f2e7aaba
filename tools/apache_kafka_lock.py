"""Generate ``kafka_async/testing/apache_locks.py``: the exact jars of an Apache Kafka version.

The user path of ``kafka_async.testing.apache`` downloads these jars straight from Maven
Central (no Maven needed) and checks each against the SHA-256 recorded here. This tool is the
only place that needs Maven: it resolves the project's ``apache-kafka.pom.xml`` for each
version (``copy-dependencies`` in repository layout, so every file's path names its
coordinates), adds the SLF4J-to-Log4j2 binding the POMs lack (as the launcher's Maven path
does), cross-checks each jar against the ``.sha1`` Maven Central publishes beside it, and
writes the lock module.

    python tools/apache_kafka_lock.py 4.1.1 4.4.0
    python tools/apache_kafka_lock.py --add 2.8.2 3.9.1   # keep the versions already locked

Run it again (with every version to keep) when the default Kafka version changes. Releases
before 4.0 log through Log4j 1 (reload4j) and their POMs bring the SLF4J binding: nothing
is added for them.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POM = ROOT / "kafka_async" / "testing" / "apache-kafka.pom.xml"
OUT = ROOT / "kafka_async" / "testing" / "apache_locks.py"
CENTRAL = "https://repo1.maven.org/maven2/"

HEADER = '''"""Lock lists of Apache Kafka's runtime jars, by Kafka version (generated; do not edit).

Written by ``tools/apache_kafka_lock.py`` (the only step that needs Maven). Each entry is
``("group:artifact:version", sha256)`` of one jar on Maven Central, whose path is
``group/with/slashes/artifact/version/artifact-version.jar``. Together they are the classpath
of ``kafka.Kafka`` and of ``kafka-tools``, plus (from 4.0) the SLF4J-to-Log4j2 binding the
POMs lack. ``kafka_async.testing.apache`` downloads them with urllib and checks every SHA-256.
"""

from __future__ import annotations

#: Kafka version -> the jars of its runtime classpath.
LOCKS: dict[str, tuple[tuple[str, str], ...]] = {
'''


def _mvn(pom: Path, *goals: str) -> None:
    subprocess.run(["mvn", "-B", "-q", "-f", str(pom), *goals], check=True)


def _jars(root: Path) -> list[tuple[str, str, str, Path]]:
    """(group, artifact, version, file) of every jar under a repository-layout folder."""
    found = []
    for jar in sorted(root.rglob("*.jar")):
        rel = jar.relative_to(root).parts
        group, artifact, version = ".".join(rel[:-3]), rel[-3], rel[-2]
        if jar.name != f"{artifact}-{version}.jar":
            raise SystemExit(f"unexpected file name (a classifier?): {jar}")
        found.append((group, artifact, version, jar))
    return found


def _central_sha1(group: str, artifact: str, version: str) -> str:
    url = f"{CENTRAL}{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}.jar.sha1"
    with urllib.request.urlopen(url, timeout=60) as resp:
        return bytes(resp.read()).decode().split()[0].strip().lower()


def lock(version: str) -> list[tuple[str, str, str, str]]:
    """Resolve ``version`` with Maven and return its checked jar list."""
    work = Path(tempfile.mkdtemp(prefix="kafka-lock-"))
    try:
        pom = work / "pom.xml"
        shutil.copy(POM, pom)
        libs = work / "libs"
        _mvn(
            pom,
            f"-Dkafka.version={version}",
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            "-Dmdep.useRepositoryLayout=true",
            f"-DoutputDirectory={libs}",
        )
        jars = _jars(libs)
        by_artifact = {a: v for _, a, v, _ in jars}
        if "log4j-core" not in by_artifact and _version_key(version) >= (4, 0):
            # 4.0.x's POMs name no Log4j 2 (the .tgz ships it): the launcher's version.
            from kafka_async.testing.apache import LOG4J2_FOR_4_0

            extra = work / "log4j2"
            for artifact in ("log4j-api", "log4j-core"):
                coordinates = f"org.apache.logging.log4j:{artifact}:{LOG4J2_FOR_4_0}"
                _mvn(
                    pom,
                    "dependency:copy",
                    f"-Dartifact={coordinates}",
                    f"-DoutputDirectory={extra}",
                )
                jar = extra / f"{artifact}-{LOG4J2_FOR_4_0}.jar"
                jars.append(("org.apache.logging.log4j", artifact, LOG4J2_FOR_4_0, jar))
            by_artifact.update({"log4j-api": LOG4J2_FOR_4_0, "log4j-core": LOG4J2_FOR_4_0})
        if "log4j-core" not in by_artifact:
            # Before 4.0: Log4j 1 with the binding in the POMs (slf4j-reload4j/-log4j12).
            if not {"slf4j-reload4j", "slf4j-log4j12"} & set(by_artifact):
                raise SystemExit(f"{version}: neither log4j-core nor an SLF4J-Log4j 1 binding")
            return _checked(jars, version)
        slf4j, log4j = by_artifact["slf4j-api"], by_artifact["log4j-core"]
        binding = "log4j-slf4j-impl" if slf4j.startswith("1.") else "log4j-slf4j2-impl"
        extra = work / "binding"
        _mvn(
            pom,
            "dependency:copy",
            f"-Dartifact=org.apache.logging.log4j:{binding}:{log4j}",
            f"-DoutputDirectory={extra}",
        )
        # dependency:copy writes a flat folder: the coordinates are the ones asked for.
        jars.append(("org.apache.logging.log4j", binding, log4j, extra / f"{binding}-{log4j}.jar"))
        return _checked(jars, version)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _checked(
    jars: list[tuple[str, str, str, Path]], version: str
) -> list[tuple[str, str, str, str]]:
    """Each jar's SHA-256, after its SHA-1 matched Maven Central's ``.sha1``."""
    entries = []
    for group, artifact, ver, jar in jars:
        data = jar.read_bytes()
        sha1 = hashlib.sha1(data).hexdigest()
        if sha1 != _central_sha1(group, artifact, ver):
            raise SystemExit(f"{jar.name}: SHA-1 differs from Maven Central's .sha1")
        entries.append((group, artifact, ver, hashlib.sha256(data).hexdigest()))
    if not any(a == "kafka_2.13" and v == version for _, a, v, _ in entries):
        raise SystemExit(f"Maven did not bring kafka_2.13 {version}")
    return entries


def _existing() -> dict[str, list[tuple[str, str, str, str]]]:
    """The versions already in the lock module, as entries."""
    namespace: dict[str, object] = {}
    exec(compile(OUT.read_text(), str(OUT), "exec"), namespace)  # our own generated module
    locks = namespace["LOCKS"]
    assert isinstance(locks, dict)
    return {
        version: [(*coordinates.split(":"), sha256) for coordinates, sha256 in jars]
        for version, jars in locks.items()
    }


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="+", help="Kafka versions, e.g. 4.1.1 4.4.0")
    parser.add_argument(
        "--add", action="store_true", help="keep the versions already locked (unchanged)"
    )
    args = parser.parse_args()
    locks = _existing() if args.add else {}
    for version in args.versions:
        locks[version] = lock(version)
        print(f"{version}: {len(locks[version])} jars", file=sys.stderr)
    body = [HEADER]
    for version in sorted(locks, key=_version_key):
        entries = locks[version]
        body.append(f'    "{version}": (\n')
        for group, artifact, ver, sha256 in entries:
            coordinates = f"{group}:{artifact}:{ver}"
            body.append("        (\n")
            body.append(f'            "{coordinates}",\n            "{sha256}",\n')
            body.append("        ),\n")
        body.append("    ),\n")
    body.append("}\n")
    OUT.write_text("".join(body))
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
