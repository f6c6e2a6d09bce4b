// The cluster's certificate authority, derived from its secret, and the TLS
// context every connection of a member uses (OpenSSL 3).
#include "base/cluster_tls.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>

#include "base/hmac.hpp"

namespace actorrec {
namespace {

// scrypt's cost for turning the secret into the CA key: 16 MiB and about
// 50 ms once per process, so that guessing a weak secret from a certificate
// (which any client that connects receives) costs as much per guess.
constexpr uint64_t kScryptN = uint64_t{1} << 14;
constexpr uint64_t kScryptR = 8;
constexpr uint64_t kScryptP = 1;
constexpr char kCaSalt[] = "actorrec cluster CA v1";
constexpr char kCaName[] = "actorrec cluster CA";
// Both certificates are valid from 2020 to 9999: they live as long as the
// process (the leaf) or the secret (the CA), and clocks of members differ.
constexpr time_t kNotBefore = 1577836800;     // 2020-01-01
constexpr time_t kNotAfter = 253402300799;    // 9999-12-31 23:59:59

struct Deleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(SSL_CTX* p) const { SSL_CTX_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Deleter>;
using Cert = std::unique_ptr<X509, Deleter>;

std::string OpenSslError(const std::string& what) {
  std::string msg = what;
  if (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    msg += ": ";
    msg += buf;
  }
  ERR_clear_error();
  return msg;
}

bool AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A v3 certificate for `key` named `name`, signed by `issuer_key` (whose
// certificate is `issuer`, or this one when null: self-signed).
Cert MakeCert(EVP_PKEY* key, const std::string& name, uint64_t serial, bool ca, X509* issuer, EVP_PKEY* issuer_key) {
  Cert cert(X509_new());
  if (!cert) return nullptr;
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set_uint64(X509_get_serialNumber(cert.get()), serial);
  ASN1_TIME_set(X509_getm_notBefore(cert.get()), kNotBefore);
  ASN1_TIME_set(X509_getm_notAfter(cert.get()), kNotAfter);
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(name.c_str()), -1,
                             -1, 0);
  X509_set_issuer_name(cert.get(), issuer != nullptr ? X509_get_subject_name(issuer) : subject);
  if (X509_set_pubkey(cert.get(), key) != 1) return nullptr;
  X509* signer = issuer != nullptr ? issuer : cert.get();
  if (!AddExtension(cert.get(), signer, NID_basic_constraints, ca ? "critical,CA:TRUE" : "critical,CA:FALSE") ||
      !AddExtension(cert.get(), signer, NID_key_usage, ca ? "critical,keyCertSign" : "critical,digitalSignature")) {
    return nullptr;
  }
  // Ed25519 signs the whole certificate: no separate digest.
  if (X509_sign(cert.get(), issuer_key, nullptr) <= 0) return nullptr;
  return cert;
}

int CheckIndex() {
  static const int index = SSL_get_ex_new_index(
      0, nullptr, nullptr, nullptr,
      [](void*, void* ptr, CRYPTO_EX_DATA*, int, long, void*) { delete static_cast<PeerCheck*>(ptr); });
  return index;
}

std::string CommonName(X509* cert) {
  if (cert == nullptr) return "";
  char buf[256] = {0};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf, sizeof buf) < 0) return "";
  return buf;
}

// Records what the peer claims and whether it verified; the verdict stays
// OpenSSL's (a failure ends the handshake with an alert).
int Verify(int preverify_ok, X509_STORE_CTX* store) {
  auto* ssl = static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  if (ssl != nullptr) {
    PeerCheck& check = ClusterTls::CheckOf(ssl);
    if (check.claimed_member.empty()) check.claimed_member = CommonName(X509_STORE_CTX_get0_cert(store));
    if (!preverify_ok && check.verify_error == X509_V_OK) check.verify_error = X509_STORE_CTX_get_error(store);
  }
  return preverify_ok;
}

}  // namespace

Result<std::shared_ptr<ClusterTls>> ClusterTls::Create(const std::string& secret, const std::string& member) {
  unsigned char seed[32];
  if (EVP_PBE_scrypt(secret.data(), secret.size(), reinterpret_cast<const unsigned char*>(kCaSalt),
                     sizeof kCaSalt - 1, kScryptN, kScryptR, kScryptP, 64 * 1024 * 1024, seed, sizeof seed) != 1) {
    return Status::NotSupported(OpenSslError("cannot derive the cluster CA key (scrypt)"));
  }
  Key ca_key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed, sizeof seed));
  OPENSSL_cleanse(seed, sizeof seed);
  if (!ca_key) return Status::NotSupported(OpenSslError("cannot make the cluster CA key (Ed25519)"));
  // Named after its key, so that a certificate from another secret names an
  // issuer this member does not know. Ed25519 signatures are deterministic:
  // every member makes this same CA certificate, byte for byte.
  unsigned char pub[32];
  size_t pub_len = sizeof pub;
  EVP_PKEY_get_raw_public_key(ca_key.get(), pub, &pub_len);
  const std::string ca_name = std::string(kCaName) + " " + ToHex(std::string(reinterpret_cast<char*>(pub), 8));
  Cert ca = MakeCert(ca_key.get(), ca_name, 1, true, nullptr, ca_key.get());
  if (!ca) return Status::NotSupported(OpenSslError("cannot make the cluster CA certificate"));

  Key key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  if (!key) return Status::NotSupported(OpenSslError("cannot make this member's key (Ed25519)"));
  uint64_t serial = 0;
  RAND_bytes(reinterpret_cast<unsigned char*>(&serial), sizeof serial);
  Cert cert = MakeCert(key.get(), member, (serial >> 1) | 2, false, ca.get(), ca_key.get());
  if (!cert) return Status::NotSupported(OpenSslError("cannot make this member's certificate"));

  std::unique_ptr<SSL_CTX, Deleter> ctx(SSL_CTX_new(TLS_method()));
  if (!ctx) return Status::NotSupported(OpenSslError("cannot make a TLS context"));
  SSL_CTX* c = ctx.get();
  if (SSL_CTX_set_min_proto_version(c, TLS1_3_VERSION) != 1 || SSL_CTX_use_certificate(c, cert.get()) != 1 ||
      SSL_CTX_use_PrivateKey(c, key.get()) != 1 || SSL_CTX_check_private_key(c) != 1 ||
      X509_STORE_add_cert(SSL_CTX_get_cert_store(c), ca.get()) != 1) {
    return Status::NotSupported(OpenSslError("cannot set up the TLS context"));
  }
  SSL_CTX_set_verify(c, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, Verify);
  SSL_CTX_set_verify_depth(c, 1);  // leaf, then the CA
  // No resumption: every connection proves its certificate afresh (and the
  // server sends no tickets after the handshake).
  SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_num_tickets(c, 0);
  // CAF's stream writes what it can and retries the rest from a buffer that
  // may have moved.
  SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);

  std::shared_ptr<ClusterTls> tls(new ClusterTls());
  tls->ctx_ = ctx.release();
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  X509_digest(ca.get(), EVP_sha256(), md, &md_len);
  tls->ca_fingerprint_ = ToHex(std::string(reinterpret_cast<const char*>(md), md_len));
  return tls;
}

ClusterTls::~ClusterTls() { SSL_CTX_free(ctx_); }

SSL* ClusterTls::NewSession(int fd, bool server) const {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) return nullptr;
  if (SSL_set_ex_data(ssl, CheckIndex(), new PeerCheck()) != 1 || SSL_set_fd(ssl, fd) != 1) {
    SSL_free(ssl);
    return nullptr;
  }
  if (server) {
    SSL_set_accept_state(ssl);
  } else {
    SSL_set_connect_state(ssl);
  }
  return ssl;
}

PeerCheck& ClusterTls::CheckOf(SSL* ssl) { return *static_cast<PeerCheck*>(SSL_get_ex_data(ssl, CheckIndex())); }

std::string ClusterTls::HandshakeFailure(SSL* ssl, int ret) {
  const int kind = SSL_get_error(ssl, ret);
  const unsigned long e = ERR_peek_error();
  const char* reason = e != 0 ? ERR_reason_error_string(e) : nullptr;
  const PeerCheck& check = CheckOf(ssl);
  const std::string claims = check.claimed_member.empty() ? "" : " (it claims member '" + check.claimed_member + "')";
  std::string why;
  if (check.verify_error != X509_V_OK) {
    why = "certificate not issued under this cluster's secret" + claims + ": " +
          X509_verify_cert_error_string(check.verify_error);
  } else if ((e == 0 && (kind == SSL_ERROR_SYSCALL || kind == SSL_ERROR_ZERO_RETURN)) ||
             (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING)) {
    why = "connection closed before the TLS handshake completed";
  } else if (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_HTTP_REQUEST) {
    why = "an HTTP request, not TLS";
  } else if (ERR_GET_LIB(e) == ERR_LIB_SSL &&
             (ERR_GET_REASON(e) == SSL_R_TLSV1_ALERT_DECRYPT_ERROR || ERR_GET_REASON(e) == SSL_R_TLSV1_ALERT_UNKNOWN_CA ||
              ERR_GET_REASON(e) == SSL_R_SSLV3_ALERT_BAD_CERTIFICATE ||
              ERR_GET_REASON(e) == SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN)) {
    // The peer checked our certificate and refused it.
    why = std::string("the peer does not accept this cluster's certificate: another cluster secret? (") + reason + ")";
  } else if (ERR_GET_LIB(e) == ERR_LIB_SSL && (ERR_GET_REASON(e) == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE ||
                                               ERR_GET_REASON(e) == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED)) {
    why = "no certificate: not a member of this cluster";
  } else if (ERR_GET_LIB(e) == ERR_LIB_SSL &&
             (ERR_GET_REASON(e) == SSL_R_WRONG_VERSION_NUMBER || ERR_GET_REASON(e) == SSL_R_UNKNOWN_PROTOCOL ||
              ERR_GET_REASON(e) == SSL_R_PACKET_LENGTH_TOO_LONG)) {
    why = std::string("not TLS (") + (reason != nullptr ? reason : "unreadable record") + ")";
  } else {
    why = std::string("TLS handshake failed: ") + (reason != nullptr ? reason : "error " + std::to_string(kind)) + claims;
  }
  ERR_clear_error();
  return why;
}

std::string ClusterTls::PeerMember(SSL* ssl) {
  X509* cert = SSL_get0_peer_certificate(ssl);
  return CommonName(cert);
}

}  // namespace actorrec
