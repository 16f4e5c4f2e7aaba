"""Generate ``kafka_async/testing/apache_locks.py``: the exact jars of an Apache Kafka version.

The user path of ``kafka_async.testing.apache`` downloads these jars straight from Maven
Central (no Maven needed) and checks each against the SHA-256 recorded here. This tool is the
only place that needs Maven: it resolves the project's ``apache-kafka.pom.xml`` for each
version (``copy-dependencies`` in repository layout, so every file's path names its
coordinates), adds the SLF4J-to-Log4j2 binding the POMs lack (as the launcher's Maven path
does), cross-checks each jar against the ``.sha1`` Maven Central publishes beside it, and
writes the lock module.

    python tools/apache_kafka_lock.py 4.1.1 4.4.0

Run it again (with every version to keep) when the default Kafka version changes.
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
of ``kafka.Kafka`` and of ``kafka-tools``, plus the SLF4J-to-Log4j2 binding the POMs lack.
``kafka_async.testing.apache`` downloads them with urllib and checks every SHA-256.
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
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="+", help="Kafka versions, e.g. 4.1.1 4.4.0")
    args = parser.parse_args()
    body = [HEADER]
    for version in args.versions:
        entries = lock(version)
        print(f"{version}: {len(entries)} jars", file=sys.stderr)
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
