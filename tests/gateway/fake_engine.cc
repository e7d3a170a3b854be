#include "fake_engine.h"

#include <fmt/format.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "metrics/prometheus_text.h"

namespace strata::gateway::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto kAsTuple = asio::as_tuple(asio::use_awaitable);

struct FakeEngine::Impl {
  std::unique_ptr<asio::io_context> io = std::make_unique<asio::io_context>(1);
  std::unique_ptr<tcp::acceptor> acceptor = std::make_unique<tcp::acceptor>(*io);
  std::thread thread;
};

namespace {

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

asio::awaitable<void> Serve(FakeEngine& engine, const std::string& reply,
                            std::atomic<int64_t>& requests, std::atomic<int64_t>& cancelled,
                            std::atomic<double>& waiting, std::atomic<int64_t>& delay_ms,
                            tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  while (true) {
    http::request<http::string_body> request;
    auto [ec, n] = co_await http::async_read(stream, buffer, request, kAsTuple);
    if (ec) co_return;
    if (request.target() == "/metrics") {
      http::response<http::string_body> response{http::status::ok, 11};
      response.set(http::field::content_type, "text/plain; version=0.0.4");
      response.body() = fmt::format(
          "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{{model_name=\"m\"}} "
          "{}\nvllm:num_requests_running{{model_name=\"m\"}} 0\n"
          "vllm:kv_cache_usage_perc{{model_name=\"m\"}} 0.1\n",
          metrics::FormatSampleValue(waiting.load()));
      response.keep_alive(request.keep_alive());
      response.prepare_payload();
      co_await http::async_write(stream, response, kAsTuple);
      continue;
    }
    ++requests;
    if (engine.shutting_down()) {
      http::response<http::string_body> response{http::status::service_unavailable, 11};
      response.set(http::field::content_type, "application/json");
      response.set("x-served-by", engine.name());
      response.body() =
          R"({"error":{"message":"server is shutting down","type":"InternalServerError",)"
          R"("param":null,"code":503}})";
      response.keep_alive(request.keep_alive());
      response.prepare_payload();
      co_await http::async_write(stream, response, kAsTuple);
      continue;
    }
    auto body = nlohmann::json::parse(request.body(), nullptr, false);
    const bool chat = request.target() == "/v1/chat/completions";
    const bool streaming = body.is_object() && body.value("stream", false);
    const std::string model = body.is_object() ? body.value("model", "") : "";
    const std::vector<std::string> words = Words(reply);
    const int64_t prompt_tokens = static_cast<int64_t>(request.body().size() / 4);
    nlohmann::json usage = {{"prompt_tokens", prompt_tokens},
                            {"completion_tokens", words.size()},
                            {"total_tokens", prompt_tokens + static_cast<int64_t>(words.size())}};
    if (!streaming) {
      nlohmann::json answer = {{"id", "x"},
                               {"object", chat ? "chat.completion" : "text_completion"},
                               {"model", model},
                               {"usage", usage}};
      answer["choices"] =
          chat
              ? nlohmann::json::array({{{"index", 0},
                                        {"message", {{"role", "assistant"}, {"content", reply}}},
                                        {"finish_reason", "stop"}}})
              : nlohmann::json::array({{{"index", 0}, {"text", reply}, {"finish_reason", "stop"}}});
      http::response<http::string_body> response{http::status::ok, 11};
      response.set(http::field::content_type, "application/json");
      response.set("x-served-by", engine.name());
      response.body() = answer.dump();
      response.keep_alive(request.keep_alive());
      response.prepare_payload();
      co_await http::async_write(stream, response, kAsTuple);
      continue;
    }
    http::response<http::empty_body> head{http::status::ok, 11};
    head.set(http::field::content_type, "text/event-stream");
    head.set("x-served-by", engine.name());
    head.chunked(true);
    head.keep_alive(false);
    http::response_serializer<http::empty_body> serializer(head);
    auto [head_ec, head_n] = co_await http::async_write_header(stream, serializer, kAsTuple);
    bool ok = !head_ec;
    asio::steady_timer timer(stream.get_executor());
    for (size_t i = 0; ok && i <= words.size(); ++i) {
      nlohmann::json chunk = {{"id", "x"}, {"model", model}};
      if (i == words.size()) {
        chunk["choices"] = nlohmann::json::array();
        chunk["usage"] = usage;
      } else {
        const std::string piece = (i == 0 ? "" : " ") + words[i];
        chunk["choices"] =
            chat ? nlohmann::json::array({{{"index", 0}, {"delta", {{"content", piece}}}}})
                 : nlohmann::json::array({{{"index", 0}, {"text", piece}}});
      }
      const std::string event = "data: " + chunk.dump() + "\n\n";
      auto [w_ec, w_n] =
          co_await asio::async_write(stream, http::make_chunk(asio::buffer(event)), kAsTuple);
      ok = !w_ec;
      if (i == 0) engine.StreamStarted();
      while (ok && engine.streams_held()) {
        timer.expires_after(std::chrono::milliseconds(2));
        co_await timer.async_wait(kAsTuple);
      }
      if (delay_ms.load() > 0) {
        timer.expires_after(std::chrono::milliseconds(delay_ms.load()));
        co_await timer.async_wait(kAsTuple);
      }
    }
    if (ok) {
      const std::string done = "data: [DONE]\n\n";
      auto [d_ec, d_n] =
          co_await asio::async_write(stream, http::make_chunk(asio::buffer(done)), kAsTuple);
      auto [l_ec, l_n] = co_await asio::async_write(stream, http::make_chunk_last(), kAsTuple);
      ok = !d_ec && !l_ec;
    }
    if (!ok) ++cancelled;
    co_return;
  }
}

asio::awaitable<void> Accept(FakeEngine& engine, FakeEngine::Impl& impl, const std::string& reply,
                             std::atomic<int64_t>& requests, std::atomic<int64_t>& cancelled,
                             std::atomic<double>& waiting, std::atomic<int64_t>& delay_ms) {
  while (true) {
    auto [ec, socket] = co_await impl.acceptor->async_accept(kAsTuple);
    if (ec) co_return;
    asio::co_spawn(*impl.io,
                   Serve(engine, reply, requests, cancelled, waiting, delay_ms, std::move(socket)),
                   asio::detached);
  }
}

}  // namespace

FakeEngine::FakeEngine(std::string name, std::string reply)
    : name_(std::move(name)), reply_(std::move(reply)), impl_(std::make_unique<Impl>()) {
  tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor->open(endpoint.protocol());
  impl_->acceptor->set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor->bind(endpoint);
  impl_->acceptor->listen();
  port_ = impl_->acceptor->local_endpoint().port();
  asio::co_spawn(*impl_->io,
                 Accept(*this, *impl_, reply_, requests_, cancelled_, waiting_, chunk_delay_ms_),
                 asio::detached);
  impl_->thread = std::thread([this] { impl_->io->run(); });
}

void FakeEngine::Kill() {
  if (!impl_->io) return;
  impl_->io->stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  // Destroying the loop destroys the suspended connections, closing their sockets.
  impl_->acceptor.reset();
  impl_->io.reset();
}

FakeEngine::~FakeEngine() { Kill(); }

}  // namespace strata::gateway::testing
