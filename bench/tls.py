"""What TLS costs, Brook and Redis side by side in one run.

    python -m bench.tls [--requests 200000] [--repeat 3]

SET (redis-benchmark's ``key:__rand_int__`` keys) and XADD (stream ``s``) at ``-P 1`` and
``-P 16``, over the plain port and over the TLS port (``redis-benchmark --tls``, with a client
certificate: Redis's default ``tls-auth-clients yes``), medians of ``--repeat``. The
certificates are made for the run (trustme, a development dependency).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

import trustme

from bench.run import free_port, machine_description, run_benchmark, start_targets, stop_targets


def make_certificates(directory: Path) -> dict[str, Path]:
    """A CA, the servers' certificate and a client's, as PEM files (key and chain in one)."""
    ca = trustme.CA()
    paths = {"ca": directory / "ca.pem", "server": directory / "server.pem",
             "client": directory / "client.pem"}
    ca.cert_pem.write_to_path(str(paths["ca"]))
    ca.issue_cert("localhost", "127.0.0.1").private_key_and_cert_chain_pem.write_to_path(
        str(paths["server"]))
    ca.issue_cert("bench").private_key_and_cert_chain_pem.write_to_path(str(paths["client"]))
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    print(machine_description())
    print(f"\nrequests/s (medians of {options.repeat}), plain TCP / TLS")
    print(f"{'test':12} {'server':6} {'plain':>10} {'TLS':>10} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as workdir:
        certs = make_certificates(Path(workdir))
        tls_ports = {"brook": free_port(), "redis": free_port()}

        def tls_args(name: str) -> list[str]:
            return ["--tls-port", str(tls_ports[name]), "--tls-cert-file", str(certs["server"]),
                    "--tls-key-file", str(certs["server"]),
                    "--tls-ca-cert-file", str(certs["ca"])]

        client_flags = ["--tls", "--cacert", str(certs["ca"]), "--cert", str(certs["client"]),
                        "--key", str(certs["client"])]
        targets = start_targets(Path(workdir), ["--save", ""], shared_args=tls_args)
        try:
            for test in ("set", "xadd"):
                for pipeline in (1, 16):
                    for target in targets:
                        tls = (tls_ports[target.name], client_flags)
                        runs: dict[str, list[float]] = {"plain": [], "tls": []}
                        for _ in range(options.repeat):  # interleaved: drift hits both alike
                            runs["plain"].append(run_benchmark(
                                target.port, test, pipeline, options.requests))
                            runs["tls"].append(run_benchmark(
                                target.port, test, pipeline, options.requests, tls=tls))
                        plain = statistics.median(runs["plain"])
                        secure = statistics.median(runs["tls"])
                        print(f"{test + ' -P ' + str(pipeline):12} {target.name:6} "
                              f"{plain:10,.0f} {secure:10,.0f} {secure / plain:6.2f}")
        finally:
            stop_targets(targets)


if __name__ == "__main__":
    main()
