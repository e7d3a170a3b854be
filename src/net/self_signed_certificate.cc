#include "net/self_signed_certificate.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>
#include <memory>

#include "net/pem_text.h"

namespace strata::net {
namespace {

bool AddExtension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str());
  if (extension == nullptr) return false;
  bool added = X509_add_ext(cert, extension, -1) == 1;
  X509_EXTENSION_free(extension);
  return added;
}

}  // namespace

Result<std::pair<std::string, std::string>> SelfSignedCertificate(const std::string& host) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), &EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), &X509_free);
  if (!key || !cert) return Err(InternalError("self-signed certificate: out of memory"));
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof(serial)) != 1) {
    return Err(InternalError("self-signed certificate: no random serial"));
  }
  serial[0] &= 0x7f;  // positive
  std::unique_ptr<BIGNUM, decltype(&BN_free)> number(BN_bin2bn(serial, sizeof(serial), nullptr),
                                                     &BN_free);
  boost::system::error_code not_ip;
  boost::asio::ip::make_address(host, not_ip);
  const std::string alt_name = (not_ip ? "DNS:" : "IP:") + host;
  X509_NAME* name = X509_get_subject_name(cert.get());
  bool made = number && X509_set_version(cert.get(), 2) == 1 &&
              BN_to_ASN1_INTEGER(number.get(), X509_get_serialNumber(cert.get())) != nullptr &&
              X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60) != nullptr &&
              X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600) != nullptr &&
              X509_set_pubkey(cert.get(), key.get()) == 1 &&
              X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                         reinterpret_cast<const unsigned char*>(host.c_str()), -1,
                                         -1, 0) == 1 &&
              X509_set_issuer_name(cert.get(), name) == 1 &&
              AddExtension(cert.get(), NID_basic_constraints, "critical,CA:FALSE") &&
              AddExtension(cert.get(), NID_key_usage, "critical,digitalSignature") &&
              AddExtension(cert.get(), NID_ext_key_usage, "serverAuth") &&
              AddExtension(cert.get(), NID_subject_alt_name, alt_name) &&
              X509_sign(cert.get(), key.get(), EVP_sha256()) > 0;
  if (!made) return Err(InternalError("self-signed certificate for " + host + ": signing failed"));
  std::string cert_pem = ToPem([&](BIO* bio) { return PEM_write_bio_X509(bio, cert.get()); });
  std::string key_pem = ToPem([&](BIO* bio) {
    return PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
  if (cert_pem.empty() || key_pem.empty()) {
    return Err(InternalError("self-signed certificate for " + host + ": PEM encoding failed"));
  }
  return std::make_pair(std::move(cert_pem), std::move(key_pem));
}

}  // namespace strata::net
