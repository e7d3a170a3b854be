#include "kubesched/device_selector.h"

#include <cctype>
#include <string>
#include <vector>

namespace strata::kubesched {
namespace {

enum class Op {
  kLiteral,
  kDevice,
  kMember,  // name: the member; args[0]: what it is a member of
  kIndex,   // args[0][args[1]]
  kCall,    // name; args[0]: the receiver (null for a global function), then the arguments
  kList,
  kNot,
  kAnd,
  kOr,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,
};

struct Value {
  enum class Kind {
    kError,
    kBool,
    kInt,
    kString,
    kQuantity,
    kList,
    kDevice,
    kAttributes,       // device.attributes
    kCapacity,         // device.capacity
    kAttributeDomain,  // device.attributes["domain"]: text is the domain
    kCapacityDomain,
  };
  Kind kind = Kind::kError;
  bool boolean = false;
  int64_t integer = 0;
  std::string text;
  Quantity quantity;
  std::vector<Value> list;

  static Value Bool(bool b) {
    Value v;
    v.kind = Kind::kBool;
    v.boolean = b;
    return v;
  }
  static Value Int(int64_t i) {
    Value v;
    v.kind = Kind::kInt;
    v.integer = i;
    return v;
  }
  static Value String(std::string s, Kind kind = Kind::kString) {
    Value v;
    v.kind = kind;
    v.text = std::move(s);
    return v;
  }
  bool ok() const { return kind != Kind::kError; }
};

}  // namespace

struct DeviceSelector::Node {
  Op op = Op::kLiteral;
  Value literal;
  std::string name;
  std::vector<std::shared_ptr<const Node>> args;
};

namespace {

using NodePtr = std::shared_ptr<const DeviceSelector::Node>;

struct Token {
  enum class Kind { kEnd, kIdent, kString, kInt, kPunct };
  Kind kind = Kind::kEnd;
  std::string text;
  int64_t integer = 0;
  size_t offset = 0;
};

Status ErrorAt(size_t offset, const std::string& what) {
  return Status(StatusCode::kInvalidArgument, "offset " + std::to_string(offset) + ": " + what);
}

Result<std::vector<Token>> Tokenize(std::string_view in) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < in.size()) {
    char c = in[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    Token token;
    token.offset = i;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = i;
      while (i < in.size() && (std::isalnum(static_cast<unsigned char>(in[i])) || in[i] == '_'))
        ++i;
      token.kind = Token::Kind::kIdent;
      token.text = std::string(in.substr(start, i - start));
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = i;
      while (i < in.size() && std::isdigit(static_cast<unsigned char>(in[i]))) ++i;
      if (i < in.size() && (in[i] == '.' || in[i] == 'e' || in[i] == 'E' || in[i] == 'u'))
        return tl::unexpected(ErrorAt(i, "only integer literals are supported"));
      try {
        token.integer = std::stoll(std::string(in.substr(start, i - start)));
      } catch (const std::exception&) {
        return tl::unexpected(ErrorAt(start, "integer literal out of range"));
      }
      token.kind = Token::Kind::kInt;
    } else if (c == '"' || c == '\'') {
      ++i;
      std::string text;
      while (i < in.size() && in[i] != c) {
        if (in[i] == '\\' && i + 1 < in.size()) {
          char e = in[i + 1];
          if (e == 'n')
            text += '\n';
          else if (e == 't')
            text += '\t';
          else if (e == '\\' || e == '"' || e == '\'')
            text += e;
          else
            return tl::unexpected(ErrorAt(i, "unsupported escape"));
          i += 2;
          continue;
        }
        text += in[i++];
      }
      if (i >= in.size()) return tl::unexpected(ErrorAt(token.offset, "unterminated string"));
      ++i;
      token.kind = Token::Kind::kString;
      token.text = std::move(text);
    } else {
      static const char* kTwo[] = {"&&", "||", "==", "!=", "<=", ">="};
      token.kind = Token::Kind::kPunct;
      for (const char* two : kTwo) {
        if (in.substr(i, 2) == two) token.text = two;
      }
      if (token.text.empty()) {
        if (std::string_view("()[].,!<>").find(c) == std::string_view::npos)
          return tl::unexpected(ErrorAt(i, std::string("unsupported character '") + c + "'"));
        token.text = std::string(1, c);
      }
      i += token.text.size();
    }
    tokens.push_back(std::move(token));
  }
  Token end;
  end.offset = in.size();
  tokens.push_back(end);
  return tokens;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Result<NodePtr> Parse() {
    ASSIGN_OR_RETURN(NodePtr root, Or());
    if (Peek().kind != Token::Kind::kEnd)
      return tl::unexpected(ErrorAt(Peek().offset, "unexpected \"" + Peek().text + "\""));
    return root;
  }

 private:
  const Token& Peek() const { return tokens_[pos_]; }
  bool IsPunct(const char* text) const {
    return Peek().kind == Token::Kind::kPunct && Peek().text == text;
  }
  bool Accept(const char* text) {
    if (!IsPunct(text)) return false;
    ++pos_;
    return true;
  }
  Status Expect(const char* text) {
    if (Accept(text)) return Status::Ok();
    return ErrorAt(Peek().offset, std::string("expected \"") + text + "\"");
  }
  static NodePtr Make(Op op, std::vector<NodePtr> args, std::string name = "") {
    auto node = std::make_shared<DeviceSelector::Node>();
    node->op = op;
    node->args = std::move(args);
    node->name = std::move(name);
    return node;
  }

  Result<NodePtr> Or() {
    ASSIGN_OR_RETURN(NodePtr left, And());
    while (Accept("||")) {
      ASSIGN_OR_RETURN(NodePtr right, And());
      left = Make(Op::kOr, {left, right});
    }
    return left;
  }
  Result<NodePtr> And() {
    ASSIGN_OR_RETURN(NodePtr left, Relation());
    while (Accept("&&")) {
      ASSIGN_OR_RETURN(NodePtr right, Relation());
      left = Make(Op::kAnd, {left, right});
    }
    return left;
  }
  Result<NodePtr> Relation() {
    ASSIGN_OR_RETURN(NodePtr left, Unary());
    static const std::pair<const char*, Op> kOps[] = {{"==", Op::kEq}, {"!=", Op::kNe},
                                                      {"<=", Op::kLe}, {">=", Op::kGe},
                                                      {"<", Op::kLt},  {">", Op::kGt}};
    for (const auto& [text, op] : kOps) {
      if (Accept(text)) {
        ASSIGN_OR_RETURN(NodePtr right, Unary());
        return Make(op, {left, right});
      }
    }
    if (Peek().kind == Token::Kind::kIdent && Peek().text == "in") {
      ++pos_;
      ASSIGN_OR_RETURN(NodePtr right, Unary());
      return Make(Op::kIn, {left, right});
    }
    return left;
  }
  Result<NodePtr> Unary() {
    if (Accept("!")) {
      ASSIGN_OR_RETURN(NodePtr operand, Unary());
      return Make(Op::kNot, {operand});
    }
    return Postfix();
  }
  Result<std::vector<NodePtr>> Arguments() {
    std::vector<NodePtr> args;
    if (Accept(")")) return args;
    while (true) {
      ASSIGN_OR_RETURN(NodePtr arg, Or());
      args.push_back(std::move(arg));
      if (Accept(")")) return args;
      RETURN_IF_ERROR(Expect(","));
    }
  }
  Result<NodePtr> Postfix() {
    ASSIGN_OR_RETURN(NodePtr node, Primary());
    while (true) {
      if (Accept(".")) {
        if (Peek().kind != Token::Kind::kIdent)
          return tl::unexpected(ErrorAt(Peek().offset, "expected a member name"));
        Token member = tokens_[pos_++];
        if (Accept("(")) {
          static const char* kMethods[] = {"compareTo", "isGreaterThan", "isLessThan", "startsWith",
                                           "endsWith",  "contains",      "lowerAscii"};
          bool known = false;
          for (const char* method : kMethods) known = known || member.text == method;
          if (!known)
            return tl::unexpected(ErrorAt(member.offset, "unsupported method " + member.text));
          ASSIGN_OR_RETURN(std::vector<NodePtr> args, Arguments());
          args.insert(args.begin(), node);
          node = Make(Op::kCall, std::move(args), member.text);
        } else {
          node = Make(Op::kMember, {node}, member.text);
        }
      } else if (Accept("[")) {
        ASSIGN_OR_RETURN(NodePtr key, Or());
        RETURN_IF_ERROR(Expect("]"));
        node = Make(Op::kIndex, {node, key});
      } else {
        return node;
      }
    }
  }
  Result<NodePtr> Primary() {
    Token token = Peek();
    switch (token.kind) {
      case Token::Kind::kInt: {
        ++pos_;
        auto node = std::make_shared<DeviceSelector::Node>();
        node->literal = Value::Int(token.integer);
        return NodePtr(node);
      }
      case Token::Kind::kString: {
        ++pos_;
        auto node = std::make_shared<DeviceSelector::Node>();
        node->literal = Value::String(token.text);
        return NodePtr(node);
      }
      case Token::Kind::kIdent: {
        ++pos_;
        if (token.text == "true" || token.text == "false") {
          auto node = std::make_shared<DeviceSelector::Node>();
          node->literal = Value::Bool(token.text == "true");
          return NodePtr(node);
        }
        if (token.text == "device") return Make(Op::kDevice, {});
        if (Accept("(")) {
          if (token.text != "quantity" && token.text != "has")
            return tl::unexpected(ErrorAt(token.offset, "unsupported function " + token.text));
          ASSIGN_OR_RETURN(std::vector<NodePtr> args, Arguments());
          if (args.size() != 1)
            return tl::unexpected(ErrorAt(token.offset, token.text + " takes one argument"));
          if (token.text == "has" && args[0]->op != Op::kMember && args[0]->op != Op::kIndex)
            return tl::unexpected(ErrorAt(token.offset, "has() takes a member"));
          args.insert(args.begin(), nullptr);
          return Make(Op::kCall, std::move(args), token.text);
        }
        return tl::unexpected(ErrorAt(token.offset, "unknown variable " + token.text));
      }
      case Token::Kind::kPunct:
        if (Accept("(")) {
          ASSIGN_OR_RETURN(NodePtr inner, Or());
          RETURN_IF_ERROR(Expect(")"));
          return inner;
        }
        if (Accept("[")) {
          std::vector<NodePtr> items;
          if (!Accept("]")) {
            while (true) {
              ASSIGN_OR_RETURN(NodePtr item, Or());
              items.push_back(std::move(item));
              if (Accept("]")) break;
              RETURN_IF_ERROR(Expect(","));
            }
          }
          return Make(Op::kList, std::move(items));
        }
        break;
      case Token::Kind::kEnd:
        return tl::unexpected(ErrorAt(token.offset, "unexpected end of expression"));
    }
    return tl::unexpected(ErrorAt(token.offset, "unexpected \"" + token.text + "\""));
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

using Kind = Value::Kind;

Value FromAttribute(const DeviceAttribute& attribute) {
  if (const bool* b = std::get_if<bool>(&attribute)) return Value::Bool(*b);
  if (const int64_t* i = std::get_if<int64_t>(&attribute)) return Value::Int(*i);
  return Value::String(std::get<std::string>(attribute));
}

// base.name or base["name"].
Value Member(const Value& base, const std::string& name, const DeviceView& device) {
  switch (base.kind) {
    case Kind::kDevice:
      if (name == "driver") return Value::String(device.driver);
      if (name == "attributes") return Value::String("", Kind::kAttributes);
      if (name == "capacity") return Value::String("", Kind::kCapacity);
      return {};
    case Kind::kAttributes:
      return Value::String(name, Kind::kAttributeDomain);
    case Kind::kCapacity:
      return Value::String(name, Kind::kCapacityDomain);
    case Kind::kAttributeDomain: {
      auto it = device.attributes.find(base.text + "/" + name);
      return it == device.attributes.end() ? Value{} : FromAttribute(it->second);
    }
    case Kind::kCapacityDomain: {
      auto it = device.capacity.find(base.text + "/" + name);
      if (it == device.capacity.end()) return {};
      Value v;
      v.kind = Kind::kQuantity;
      v.quantity = it->second;
      return v;
    }
    default:
      return {};
  }
}

bool Equal(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::kBool:
      return a.boolean == b.boolean;
    case Kind::kInt:
      return a.integer == b.integer;
    case Kind::kString:
      return a.text == b.text;
    case Kind::kQuantity:
      return a.quantity == b.quantity;
    default:
      return false;
  }
}

Value Evaluate(const DeviceSelector::Node& node, const DeviceView& device);

Value Call(const DeviceSelector::Node& node, const DeviceView& device) {
  if (node.name == "has") {
    return Value::Bool(Evaluate(*node.args[1], device).ok());
  }
  std::vector<Value> args;
  for (size_t a = 1; a < node.args.size(); ++a) args.push_back(Evaluate(*node.args[a], device));
  for (const Value& arg : args)
    if (!arg.ok()) return {};
  if (node.name == "quantity") {
    if (args[0].kind != Kind::kString) return {};
    Result<Quantity> q = Quantity::Parse(args[0].text);
    if (!q) return {};
    Value v;
    v.kind = Kind::kQuantity;
    v.quantity = *q;
    return v;
  }
  Value receiver = Evaluate(*node.args[0], device);
  if (node.name == "lowerAscii") {
    if (receiver.kind != Kind::kString || !args.empty()) return {};
    std::string lower = receiver.text;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return Value::String(lower);
  }
  if (args.size() != 1) return {};
  const Value& arg = args[0];
  if (receiver.kind == Kind::kQuantity && arg.kind == Kind::kQuantity) {
    auto order = receiver.quantity <=> arg.quantity;
    int cmp = order < 0 ? -1 : (order > 0 ? 1 : 0);
    if (node.name == "compareTo") return Value::Int(cmp);
    if (node.name == "isGreaterThan") return Value::Bool(cmp > 0);
    if (node.name == "isLessThan") return Value::Bool(cmp < 0);
    return {};
  }
  if (receiver.kind == Kind::kString && arg.kind == Kind::kString) {
    const std::string& s = receiver.text;
    const std::string& t = arg.text;
    if (node.name == "startsWith") return Value::Bool(s.rfind(t, 0) == 0);
    if (node.name == "endsWith")
      return Value::Bool(s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0);
    if (node.name == "contains") return Value::Bool(s.find(t) != std::string::npos);
  }
  return {};
}

Value Evaluate(const DeviceSelector::Node& node, const DeviceView& device) {
  switch (node.op) {
    case Op::kLiteral:
      return node.literal;
    case Op::kDevice:
      return Value::String("", Kind::kDevice);
    case Op::kMember:
      return Member(Evaluate(*node.args[0], device), node.name, device);
    case Op::kIndex: {
      Value key = Evaluate(*node.args[1], device);
      if (key.kind != Kind::kString) return {};
      return Member(Evaluate(*node.args[0], device), key.text, device);
    }
    case Op::kCall:
      return Call(node, device);
    case Op::kList: {
      Value list;
      list.kind = Kind::kList;
      for (const NodePtr& item : node.args) {
        Value v = Evaluate(*item, device);
        if (!v.ok()) return {};
        list.list.push_back(std::move(v));
      }
      return list;
    }
    case Op::kNot: {
      Value v = Evaluate(*node.args[0], device);
      return v.kind == Kind::kBool ? Value::Bool(!v.boolean) : Value{};
    }
    case Op::kAnd:
    case Op::kOr: {
      // CEL's commutative logic: a decisive operand wins over an error in the other.
      bool decisive = node.op == Op::kOr;
      Value a = Evaluate(*node.args[0], device);
      Value b = Evaluate(*node.args[1], device);
      if ((a.kind == Kind::kBool && a.boolean == decisive) ||
          (b.kind == Kind::kBool && b.boolean == decisive))
        return Value::Bool(decisive);
      if (a.kind == Kind::kBool && b.kind == Kind::kBool) return Value::Bool(!decisive);
      return {};
    }
    case Op::kIn: {
      Value item = Evaluate(*node.args[0], device);
      Value list = Evaluate(*node.args[1], device);
      if (!item.ok() || list.kind != Kind::kList) return {};
      for (const Value& v : list.list)
        if (Equal(item, v)) return Value::Bool(true);
      return Value::Bool(false);
    }
    default: {
      Value a = Evaluate(*node.args[0], device);
      Value b = Evaluate(*node.args[1], device);
      if (!a.ok() || !b.ok() || a.kind != b.kind) return {};
      if (node.op == Op::kEq || node.op == Op::kNe) {
        if (a.kind != Kind::kBool && a.kind != Kind::kInt && a.kind != Kind::kString) return {};
        return Value::Bool(Equal(a, b) == (node.op == Op::kEq));
      }
      int cmp = 0;
      if (a.kind == Kind::kInt) {
        cmp = a.integer < b.integer ? -1 : (a.integer > b.integer ? 1 : 0);
      } else if (a.kind == Kind::kString) {
        cmp = a.text.compare(b.text);
      } else {
        return {};
      }
      switch (node.op) {
        case Op::kLt:
          return Value::Bool(cmp < 0);
        case Op::kLe:
          return Value::Bool(cmp <= 0);
        case Op::kGt:
          return Value::Bool(cmp > 0);
        default:
          return Value::Bool(cmp >= 0);
      }
    }
  }
}

}  // namespace

Result<DeviceSelector> DeviceSelector::Compile(std::string_view expression) {
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(expression));
  ASSIGN_OR_RETURN(NodePtr root, Parser(std::move(tokens)).Parse());
  DeviceSelector selector;
  selector.root_ = std::move(root);
  return selector;
}

bool DeviceSelector::Matches(const DeviceView& device) const {
  Value v = Evaluate(*root_, device);
  return v.kind == Kind::kBool && v.boolean;
}

}  // namespace strata::kubesched
