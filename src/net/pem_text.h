#pragma once

#include <openssl/bio.h>

#include <memory>
#include <string>

namespace strata::net {

// The PEM text that `write` (an OpenSSL PEM_write_bio_* call on the BIO it is given) produces;
// "" when it fails. For net/'s certificate code.
template <typename Write>
std::string ToPem(Write write) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  if (!bio || write(bio.get()) != 1) return "";
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

}  // namespace strata::net
