// The HTTP server over TLS, with a real TLS client: the handshake verifies the server's
// self-signed certificate, requests are served as over TCP, and a plain-HTTP client gets no
// HTTP answer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/self_signed_certificate.h"

namespace strata::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// GET `target` over TLS, trusting only `certificate_pem`; the response, or the error's message.
std::string TlsGet(int port, const std::string& certificate_pem, const std::string& target) {
  asio::io_context context;
  asio::ssl::context tls(asio::ssl::context::tls_client);
  tls.add_certificate_authority(asio::buffer(certificate_pem));
  tls.set_verify_mode(asio::ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> stream(context, tls);
  beast::error_code error;
  beast::get_lowest_layer(stream).connect(
      tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)), error);
  if (!error) stream.handshake(asio::ssl::stream_base::client, error);
  if (error) return "error: " + error.message();
  http::request<http::empty_body> request{http::verb::get, target, 11};
  request.set(http::field::host, "127.0.0.1");
  http::write(stream, request, error);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  if (!error) http::read(stream, buffer, response, error);
  if (error) return "error: " + error.message();
  return std::to_string(response.result_int()) + " " + response.body();
}

TEST(TlsServerTest, ServesHttpsWithItsCertificateAndNothingInPlainText) {
  Result<std::pair<std::string, std::string>> made = SelfSignedCertificate("127.0.0.1");
  ASSERT_TRUE(made) << made.error().ToString();
  HttpServerOptions options;
  options.tls_certificate_pem = made->first;
  options.tls_key_pem = made->second;
  HttpServer server(options);
  server.Route("GET", "/hello", [](HttpRequest request, ResponseWriter writer) {
    writer.Respond(HttpResponse::Text(200, "text/plain", "hello over " + request.target));
  });
  ASSERT_TRUE(server.Start().ok());

  EXPECT_EQ(TlsGet(server.port(), made->first, "/hello"), "200 hello over /hello");
  EXPECT_EQ(TlsGet(server.port(), made->first, "/nowhere").substr(0, 4), "404 ");

  // Another certificate is not trusted for this server.
  Result<std::pair<std::string, std::string>> other = SelfSignedCertificate("127.0.0.1");
  ASSERT_TRUE(other);
  EXPECT_THAT(TlsGet(server.port(), other->first, "/hello"), ::testing::StartsWith("error: "));

  HttpClient plain;
  HttpRequest request;
  request.target = "/hello";
  Result<HttpResponse> answered = plain.Send("127.0.0.1", server.port(), request);
  EXPECT_FALSE(answered.has_value() && answered->status == 200);
  server.Stop();
}

TEST(TlsServerTest, ACertificateWithoutItsKeyIsRefusedAtStart) {
  Result<std::pair<std::string, std::string>> made = SelfSignedCertificate("localhost");
  ASSERT_TRUE(made);
  HttpServerOptions options;
  options.tls_certificate_pem = made->first;
  HttpServer server(options);
  Status started = server.Start();
  EXPECT_EQ(started.code(), StatusCode::kInvalidArgument);
  options.tls_key_pem = "not a key";
  HttpServer broken(options);
  EXPECT_THAT(broken.Start().message(), ::testing::HasSubstr("the TLS certificate or key"));
}

}  // namespace
}  // namespace strata::net
