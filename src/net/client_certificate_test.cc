#include "net/client_certificate.h"

#include <gtest/gtest.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

#include "net/self_signed_certificate.h"

namespace strata::net {
namespace {

TEST(ClientCertificateTest, TheRequestNamesTheUserAndItsGroupsAndIsSignedByItsKey) {
  auto made = ClientCertificateRequest("system:node:gpu-7", {"system:nodes"});
  ASSERT_TRUE(made.has_value()) << made.error().ToString();
  const auto& [request_pem, key_pem] = *made;
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(request_pem.data(), static_cast<int>(request_pem.size())), &BIO_free);
  std::unique_ptr<X509_REQ, decltype(&X509_REQ_free)> request(
      PEM_read_bio_X509_REQ(bio.get(), nullptr, nullptr, nullptr), &X509_REQ_free);
  ASSERT_NE(request, nullptr) << request_pem;
  char* text = X509_NAME_oneline(X509_REQ_get_subject_name(request.get()), nullptr, 0);
  const std::string subject = text != nullptr ? text : "";
  OPENSSL_free(text);
  EXPECT_EQ(subject, "/O=system:nodes/CN=system:node:gpu-7");
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> public_key(X509_REQ_get_pubkey(request.get()),
                                                                 &EVP_PKEY_free);
  EXPECT_EQ(X509_REQ_verify(request.get(), public_key.get()), 1);
  EXPECT_NE(key_pem.find("BEGIN PRIVATE KEY"), std::string::npos);
}

TEST(ClientCertificateTest, ACertificateSaysWhoHoldsItAndUntilWhen) {
  auto made = SelfSignedCertificate("127.0.0.1");
  ASSERT_TRUE(made.has_value());
  auto facts = ReadCertificate(made->first);
  ASSERT_TRUE(facts.has_value()) << facts.error().ToString();
  EXPECT_EQ(facts->common_name, "127.0.0.1");
  const auto left = facts->not_after - std::chrono::system_clock::now();
  EXPECT_GT(left, std::chrono::hours(24 * 364));
  EXPECT_LT(left, std::chrono::hours(24 * 366));
  EXPECT_FALSE(ReadCertificate("not a certificate").has_value());
}

}  // namespace
}  // namespace strata::net
