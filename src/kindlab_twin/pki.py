"""The twin's PKI, laid out as kubeadm lays out a kind node's /etc/kubernetes/pki.

One cluster CA signs the API server's serving certificate, the etcd serving certificate and
every client certificate (components authenticate with X.509 as on a kubeadm cluster: the
subject's CN is the user, O the groups, so the default RBAC bindings for
system:kube-controller-manager and system:kube-scheduler apply). ServiceAccount tokens are
signed with their own key pair (sa.key/sa.pub). Every private key is written 0600.
"""
from __future__ import annotations

import datetime as _dt
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = _dt.timedelta(days=365)


@dataclass(frozen=True)
class Client:
    """A client certificate: file stem, user (CN) and groups (O)."""

    stem: str
    user: str
    groups: tuple[str, ...] = ()


# Who talks to whom. The admin is in system:masters as kind's kubeconfig user is.
ADMIN = Client("admin", "kubernetes-admin", ("system:masters",))
CONTROLLER_MANAGER = Client("controller-manager", "system:kube-controller-manager")
SCHEDULER = Client("scheduler", "system:kube-scheduler")
# kwok plays every kubelet; it needs nodes, pods, leases and its own CRDs cluster-wide.
KWOK = Client("kwok", "kwok-controller", ("system:masters",))
APISERVER_KUBELET = Client("apiserver-kubelet-client", "kube-apiserver-kubelet-client", ("system:masters",))
APISERVER_ETCD = Client("apiserver-etcd-client", "kube-apiserver-etcd-client")
CLIENTS = (ADMIN, CONTROLLER_MANAGER, SCHEDULER, KWOK, APISERVER_KUBELET, APISERVER_ETCD)


def _write(path: Path, data: bytes, private: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, 0o600 if private else 0o644)


def _key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _name(cn: str, groups: tuple[str, ...] = ()) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
                     + [x509.NameAttribute(NameOID.COMMON_NAME, cn)])


class Pki:
    """Creates and locates the cluster's keys and certificates under DIRECTORY. create() makes
    a new CA and ServiceAccount key each time: a cluster is created once, with fresh etcd data."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory

    def path(self, stem: str, suffix: str) -> Path:
        return self.dir / f"{stem}.{suffix}"

    @property
    def ca_cert(self) -> Path:
        return self.path("ca", "crt")

    def create(self, *, server_ips: list[str], server_names: list[str], kubelet_ips: list[str]) -> None:
        now = _dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(minutes=5)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca = (x509.CertificateBuilder().subject_name(_name("kubernetes")).issuer_name(_name("kubernetes"))
              .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now).not_valid_after(now + 10 * VALIDITY)
              .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
              .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False, content_commitment=False,
                                           data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                           crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
              .sign(ca_key, hashes.SHA256()))
        _write(self.path("ca", "key"), _key_pem(ca_key), private=True)
        _write(self.ca_cert, ca.public_bytes(serialization.Encoding.PEM), private=False)

        def issue(stem: str, subject: x509.Name, *, server: bool, client: bool,
                  ips: list[str] | None = None, names: list[str] | None = None) -> None:
            key = ec.generate_private_key(ec.SECP256R1())
            usages = ([ExtendedKeyUsageOID.SERVER_AUTH] if server else []) + \
                ([ExtendedKeyUsageOID.CLIENT_AUTH] if client else [])
            builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca.subject)
                       .public_key(key.public_key()).serial_number(x509.random_serial_number())
                       .not_valid_before(now).not_valid_after(now + VALIDITY)
                       .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                       .add_extension(x509.ExtendedKeyUsage(usages), critical=False))
            if ips or names:
                alt: list[x509.GeneralName] = [x509.DNSName(n) for n in names or []]
                alt += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips or []]
                builder = builder.add_extension(x509.SubjectAlternativeName(alt), critical=False)
            _write(self.path(stem, "key"), _key_pem(key), private=True)
            _write(self.path(stem, "crt"), builder.sign(ca_key, hashes.SHA256()).public_bytes(
                serialization.Encoding.PEM), private=False)

        issue("apiserver", _name("kube-apiserver"), server=True, client=False, ips=server_ips, names=server_names)
        issue("etcd-server", _name("etcd"), server=True, client=True, ips=["127.0.0.1"], names=["localhost"])
        issue("kubelet-serving", _name("kwok-kubelet"), server=True, client=False,
              ips=kubelet_ips + ["127.0.0.1"], names=["localhost"])
        for c in CLIENTS:
            issue(c.stem, _name(c.user, c.groups), server=False, client=True)
        sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        _write(self.path("sa", "key"), _key_pem(sa_key), private=True)
        _write(self.path("sa", "pub"), sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo), private=False)
