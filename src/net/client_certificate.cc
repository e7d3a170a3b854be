#include "net/client_certificate.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <ctime>
#include <memory>

#include "net/pem_text.h"

namespace strata::net {

Result<std::pair<std::string, std::string>> ClientCertificateRequest(
    const std::string& common_name, const std::vector<std::string>& organizations) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), &EVP_PKEY_free);
  std::unique_ptr<X509_REQ, decltype(&X509_REQ_free)> request(X509_REQ_new(), &X509_REQ_free);
  if (!key || !request) return Err(InternalError("certificate request: out of memory"));
  X509_NAME* name = X509_REQ_get_subject_name(request.get());
  auto add = [name](const char* field, const std::string& value) {
    return X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                      reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                      0) == 1;
  };
  bool made = X509_REQ_set_version(request.get(), 0) == 1;
  for (const std::string& organization : organizations) made = made && add("O", organization);
  made = made && add("CN", common_name) && X509_REQ_set_pubkey(request.get(), key.get()) == 1 &&
         X509_REQ_sign(request.get(), key.get(), EVP_sha256()) > 0;
  if (!made)
    return Err(InternalError("certificate request for " + common_name + ": signing failed"));
  std::string request_pem =
      ToPem([&](BIO* bio) { return PEM_write_bio_X509_REQ(bio, request.get()); });
  std::string key_pem = ToPem([&](BIO* bio) {
    return PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
  if (request_pem.empty() || key_pem.empty()) {
    return Err(InternalError("certificate request for " + common_name + ": PEM encoding failed"));
  }
  return std::make_pair(std::move(request_pem), std::move(key_pem));
}

Result<CertificateFacts> ReadCertificate(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr, &X509_free);
  if (!cert) return Err(InvalidArgumentError("not a PEM certificate"));
  CertificateFacts facts;
  char common_name[256] = {};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert.get()), NID_commonName, common_name,
                                sizeof(common_name)) > 0) {
    facts.common_name = common_name;
  }
  std::tm not_after{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &not_after) != 1) {
    return Err(InvalidArgumentError("the certificate's notAfter does not read as a time"));
  }
  facts.not_after = std::chrono::system_clock::from_time_t(timegm(&not_after));
  return facts;
}

}  // namespace strata::net
