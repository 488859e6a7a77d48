#include "ir/IRParser.h"

#include "ir/IRSyntax.h"
#include "ir/Layout.h"
#include "support/Quote.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace tk {
namespace {

// Nested regions and nested pointer types recurse; past this depth the input
// is rejected instead of exhausting the stack.
constexpr int kMaxDepth = 200;

enum class Tok {
  Eof,
  Ident,     // add, i32, true, func, ptr, tensor
  ValueName, // %0, %arg1, %x
  AtName,    // @kernel
  CaretName, // ^bb0
  Int,
  Float,
  String,
  Punct, // ( ) { } [ ] < > , : = ->
  Error,
};

struct Token {
  Tok kind = Tok::Eof;
  std::string text; // identifier/name without sigil, unescaped string, punctuation
  SourceLoc loc;
  int64_t intValue = 0;
  double floatValue = 0;
};

class Lexer {
public:
  Lexer(std::string_view text, BufferId buffer) : text_(text), buffer_(buffer) {}

  struct State {
    size_t pos;
    uint32_t line, col;
  };
  State state() const { return {pos_, line_, col_}; }
  void reset(State s) {
    pos_ = s.pos;
    line_ = s.line;
    col_ = s.col;
  }

  Token next() {
    skipSpaceAndComments();
    Token t;
    t.loc = here();
    if (pos_ >= text_.size()) {
      // "Unexpected end of file" points at the end of the last line rather
      // than at a line past the text, which no editor (or annotation) shows.
      if (col_ == 1 && line_ > 1) {
        size_t lineStart = text_.rfind('\n', text_.size() - 2);
        lineStart = lineStart == std::string_view::npos ? 0 : lineStart + 1;
        t.loc = {buffer_, line_ - 1, static_cast<uint32_t>(text_.size() - lineStart)};
      }
      return t;
    }
    char c = text_[pos_];
    if (c == '%' || c == '@' || c == '^') {
      advance();
      size_t start = pos_;
      while (pos_ < text_.size() && (isIRIdentChar(text_[pos_]) || text_[pos_] == '?'))
        advance();
      t.text = std::string(text_.substr(start, pos_ - start));
      t.kind = c == '%' ? Tok::ValueName : c == '@' ? Tok::AtName : Tok::CaretName;
      if (t.text.empty())
        return error(t, fmt::format("expected a name after '{}'", c));
      return t;
    }
    if (isIRIdentStart(c)) {
      size_t start = pos_;
      while (pos_ < text_.size() && isIRIdentChar(text_[pos_]))
        advance();
      t.kind = Tok::Ident;
      t.text = std::string(text_.substr(start, pos_ - start));
      return t;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '-' && pos_ + 1 < text_.size() &&
         (std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])) || text_[pos_ + 1] == 'i')))
      return number(t);
    if (c == '"')
      return string(t);
    if (c == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '>') {
      advance();
      advance();
      t.kind = Tok::Punct;
      t.text = "->";
      return t;
    }
    if (std::string_view("(){}[]<>,:=").find(c) != std::string_view::npos) {
      advance();
      t.kind = Tok::Punct;
      t.text = std::string(1, c);
      return t;
    }
    advance();
    return error(t, fmt::format("unexpected character '{}'", showChar(c)));
  }

  /// Reads the dimensions of a tensor type, "128x64x", leaving the element.
  /// Returns false when the text there is not a dimension list.
  bool dims(std::vector<int64_t> &out, std::string &err) {
    skipSpaceAndComments();
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      size_t start = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])))
        advance();
      int64_t d = 0;
      auto [p, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, d);
      (void)p;
      if (ec != std::errc()) {
        err = "tensor dimension is too large";
        return false;
      }
      if (pos_ >= text_.size() || text_[pos_] != 'x') {
        err = "expected 'x' after a tensor dimension";
        return false;
      }
      advance();
      out.push_back(d);
    }
    if (out.empty()) {
      err = "expected tensor dimensions such as 128x";
      return false;
    }
    return true;
  }

  SourceLoc here() const { return {buffer_, line_, col_}; }

private:
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }

  void skipSpaceAndComments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n')
          advance();
      } else {
        break;
      }
    }
  }

  Token error(Token t, std::string message) {
    t.kind = Tok::Error;
    t.text = std::move(message);
    return t;
  }

  Token number(Token t) {
    size_t start = pos_;
    if (text_[pos_] == '-')
      advance();
    if (text_.substr(pos_, 3) == "inf") {
      for (int i = 0; i < 3; ++i)
        advance();
      t.kind = Tok::Float;
      t.floatValue = -INFINITY;
      return t;
    }
    bool isFloat = false;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (std::isdigit(static_cast<unsigned char>(c))) {
        advance();
      } else if (c == '.' || c == 'e' || c == 'E') {
        isFloat = true;
        advance();
        if ((c == 'e' || c == 'E') && pos_ < text_.size() &&
            (text_[pos_] == '-' || text_[pos_] == '+'))
          advance();
      } else {
        break;
      }
    }
    std::string_view s = text_.substr(start, pos_ - start);
    if (isFloat) {
      // from_chars for double is in libstdc++ 11+; it reads exactly what the
      // printer's shortest round-trip form wrote.
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), t.floatValue);
      if (ec != std::errc() || p != s.data() + s.size())
        return error(t, fmt::format("malformed number '{}'", s));
      t.kind = Tok::Float;
      return t;
    }
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), t.intValue);
    if (ec != std::errc() || p != s.data() + s.size())
      return error(t, fmt::format("integer '{}' does not fit in 64 bits", s));
    t.kind = Tok::Int;
    return t;
  }

  Token string(Token t) {
    advance(); // opening quote
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_];
      if (c == '\n')
        return error(t, "unterminated string");
      advance();
      if (c != '\\') {
        t.text += c;
        continue;
      }
      if (pos_ >= text_.size())
        break;
      char e = text_[pos_];
      advance();
      switch (e) {
      case 'n':
        t.text += '\n';
        break;
      case 't':
        t.text += '\t';
        break;
      case 'r':
        t.text += '\r';
        break;
      case '"':
      case '\\':
        t.text += e;
        break;
      case 'x': {
        if (pos_ + 2 > text_.size())
          return error(t, "malformed \\x escape");
        unsigned v = 0;
        auto [p, ec] = std::from_chars(text_.data() + pos_, text_.data() + pos_ + 2, v, 16);
        if (ec != std::errc() || p != text_.data() + pos_ + 2)
          return error(t, "malformed \\x escape");
        advance();
        advance();
        t.text += static_cast<char>(v);
        break;
      }
      default:
        return error(t, fmt::format("unknown escape '\\{}'", showChar(e)));
      }
    }
    if (pos_ >= text_.size())
      return error(t, "unterminated string");
    advance(); // closing quote
    t.kind = Tok::String;
    return t;
  }

  std::string_view text_;
  BufferId buffer_;
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
};

class Parser {
public:
  Parser(IRContext &ctx, std::string_view text, BufferId buffer, DiagnosticEngine &diag)
      : ctx_(ctx), lex_(text, buffer), diag_(diag) {
    tok_ = lex_.next();
  }

  // module ::= func*
  std::unique_ptr<Module> parseModule() {
    auto module = std::make_unique<Module>(ctx_);
    while (tok_.kind != Tok::Eof) {
      if (!parseFunction(*module))
        return nullptr;
    }
    return module;
  }

  // A type and nothing after it (parseType's entry point).
  Type *parseLoneType() {
    Type *t = parseType();
    if (t && tok_.kind != Tok::Eof) {
      fail(fmt::format("unexpected text after the type"));
      return nullptr;
    }
    return t;
  }

private:
  // --- tokens
  void consume() { tok_ = lex_.next(); }
  bool isPunct(const char *p) const { return tok_.kind == Tok::Punct && tok_.text == p; }
  bool isIdent(const char *s) const { return tok_.kind == Tok::Ident && tok_.text == s; }

  bool fail(std::string message) {
    if (!failed_) {
      // A lexer error is the more precise message.
      diag_.error(tok_.loc, tok_.kind == Tok::Error ? tok_.text : std::move(message));
    }
    failed_ = true;
    return false;
  }

  std::string describeTok() const {
    switch (tok_.kind) {
    case Tok::Eof:
      return "end of file";
    case Tok::ValueName:
      return "'%" + tok_.text + "'";
    case Tok::AtName:
      return "'@" + tok_.text + "'";
    case Tok::CaretName:
      return "'^" + tok_.text + "'";
    case Tok::String:
      return "a string";
    default:
      return "'" + tok_.text + "'";
    }
  }

  bool expectPunct(const char *p, std::string_view what) {
    if (!isPunct(p))
      return fail(fmt::format("expected '{}' {}, found {}", p, what, describeTok()));
    consume();
    return true;
  }

  // --- values and scopes
  Value *lookup(const std::string &name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end())
        return found->second;
    }
    return nullptr;
  }

  bool define(const Token &nameTok, Value *v) {
    if (lookup(nameTok.text)) {
      diag_.error(nameTok.loc, fmt::format("redefinition of value '%{}'", nameTok.text));
      failed_ = true;
      return false;
    }
    scopes_.back()[nameTok.text] = v;
    return true;
  }

  // --- types
  // type ::= dtype | 'ptr' '<' type [',' int] '>' | 'tensor' '<' (int 'x')+ type '>'
  Type *parseType() {
    if (++depth_ > kMaxDepth) {
      fail("type nested too deeply");
      return nullptr;
    }
    Type *t = parseTypeInner();
    --depth_;
    return t;
  }

  Type *parseTypeInner() {
    if (tok_.kind != Tok::Ident) {
      fail(fmt::format("expected a type, found {}", describeTok()));
      return nullptr;
    }
    if (auto d = parseDTypeName(tok_.text)) {
      consume();
      return ctx_.scalar(*d);
    }
    if (tok_.text == "ptr") {
      consume();
      if (!expectPunct("<", "after 'ptr'"))
        return nullptr;
      SourceLoc pointeeLoc = tok_.loc;
      Type *pointee = parseType();
      if (!pointee)
        return nullptr;
      if (pointee->isTensor()) {
        diag_.error(pointeeLoc, "a pointer cannot point to a tensor");
        failed_ = true;
        return nullptr;
      }
      // ptr<T>, ptr<T, AS>, ptr<T, const>, ptr<T, AS, const>
      int64_t as = PointerType::kGlobal;
      bool isConst = false;
      if (isPunct(",")) {
        consume();
        if (tok_.kind == Tok::Int) {
          if (tok_.intValue < 0 || tok_.intValue > 255) {
            fail("expected an address space (0 to 255)");
            return nullptr;
          }
          as = tok_.intValue;
          consume();
          if (isPunct(",")) {
            consume();
            if (!isIdent("const")) {
              fail("expected 'const' after the address space");
              return nullptr;
            }
            isConst = true;
            consume();
          }
        } else if (isIdent("const")) {
          isConst = true;
          consume();
        } else {
          fail("expected an address space (0 to 255) or 'const'");
          return nullptr;
        }
      }
      if (!expectPunct(">", "to close the pointer type"))
        return nullptr;
      return ctx_.pointer(pointee, static_cast<unsigned>(as), isConst);
    }
    if (tok_.text == "tensor") {
      consume();
      if (!isPunct("<"))
        return fail("expected '<' after 'tensor'"), nullptr;
      // The dimensions are lexed by hand: "128x64xfp32" is not a token sequence.
      SourceLoc dimsLoc = lex_.here();
      std::vector<int64_t> shape;
      std::string err;
      if (!lex_.dims(shape, err)) {
        diag_.error(dimsLoc, err);
        failed_ = true;
        return nullptr;
      }
      if (std::optional<std::string> error = tensorShapeError(shape)) {
        diag_.error(dimsLoc, *error);
        failed_ = true;
        return nullptr;
      }
      consume();
      SourceLoc elemLoc = tok_.loc;
      Type *elem = parseType();
      if (!elem)
        return nullptr;
      if (elem->isTensor()) {
        diag_.error(elemLoc, "a tensor element cannot be a tensor");
        failed_ = true;
        return nullptr;
      }
      const LayoutAttr *layout = nullptr;
      if (isPunct(",")) {
        consume();
        SourceLoc layoutLoc = tok_.loc;
        if (!(layout = parseLayout()))
          return nullptr;
        if (layoutRank(layout) != shape.size()) {
          diag_.error(layoutLoc, fmt::format("layout of rank {} on a tensor of rank {} ({})",
                                             layoutRank(layout), shape.size(), shapeStr(shape)));
          failed_ = true;
          return nullptr;
        }
      }
      if (!expectPunct(">", "to close the tensor type"))
        return nullptr;
      return ctx_.tensor(shape, elem, layout);
    }
    fail(fmt::format("unknown type '{}'", tok_.text));
    return nullptr;
  }

  // layout ::= name '<' [param (',' param)*] '>'
  // param  ::= key '=' (int | '[' [int (',' int)*] ']' | layout)
  // The kinds and their parameters are checked by buildLayout (ir/Layout.h).
  const LayoutAttr *parseLayout() {
    if (++depth_ > kMaxDepth) {
      fail("layout nested too deeply");
      return nullptr;
    }
    const LayoutAttr *l = parseLayoutInner();
    --depth_;
    return l;
  }

  const LayoutAttr *parseLayoutInner() {
    if (tok_.kind != Tok::Ident) {
      fail(fmt::format("expected a layout such as blocked<...>, found {}", describeTok()));
      return nullptr;
    }
    std::string kind = tok_.text;
    SourceLoc loc = tok_.loc;
    consume();
    if (!expectPunct("<", "after the layout name"))
      return nullptr;
    std::vector<LayoutParam> params;
    while (!isPunct(">")) {
      if (!params.empty() && !expectPunct(",", "between layout parameters"))
        return nullptr;
      if (tok_.kind != Tok::Ident) {
        fail(fmt::format("expected a layout parameter name, found {}", describeTok()));
        return nullptr;
      }
      LayoutParam p;
      p.key = tok_.text;
      consume();
      if (!expectPunct("=", "after the layout parameter name"))
        return nullptr;
      if (tok_.kind == Tok::Int) {
        p.value = tok_.intValue;
        consume();
      } else if (tok_.kind == Tok::Ident) {
        const LayoutAttr *nested = parseLayout();
        if (!nested)
          return nullptr;
        p.value = nested;
      } else {
        std::optional<Attribute> a = isPunct("[") ? parseAttrValue() : std::optional<Attribute>();
        if (!a || !a->isIntArray()) {
          fail(fmt::format("expected an integer, an integer array or a layout, found {}",
                           describeTok()));
          return nullptr;
        }
        p.value = a->getIntArray();
      }
      params.push_back(std::move(p));
    }
    consume();
    std::string error;
    const LayoutAttr *layout = buildLayout(ctx_, kind, params, error);
    if (!layout) {
      diag_.error(loc, error);
      failed_ = true;
    }
    return layout;
  }

  bool parseTypeList(std::vector<Type *> &out) {
    do {
      if (!out.empty())
        consume(); // ','
      Type *t = parseType();
      if (!t)
        return false;
      out.push_back(t);
    } while (isPunct(","));
    return true;
  }

  // --- attributes
  // attr-dict ::= '{' name '=' attr (',' name '=' attr)* '}'
  bool parseAttrDict(AttrDict &out) {
    consume(); // '{'
    do {
      if (isPunct(","))
        consume();
      if (tok_.kind != Tok::Ident && tok_.kind != Tok::String)
        return fail(fmt::format("expected an attribute name, found {}", describeTok()));
      std::string name = tok_.text;
      SourceLoc nameLoc = tok_.loc;
      consume();
      if (!expectPunct("=", "after the attribute name"))
        return false;
      std::optional<Attribute> value = parseAttrValue();
      if (!value)
        return false;
      if (out.has(name)) {
        diag_.error(nameLoc, fmt::format("duplicate attribute '{}'", showText(name)));
        return failed_ = true, false;
      }
      out.set(name, std::move(*value));
    } while (isPunct(","));
    return expectPunct("}", "to close the attribute dictionary");
  }

  // attr ::= int | float | string | 'true' | 'false' | 'inf' | 'nan' | type
  //        | '[' [int (',' int)*] ']'
  std::optional<Attribute> parseAttrValue() {
    Token t = tok_;
    switch (t.kind) {
    case Tok::Int:
      consume();
      return Attribute(t.intValue);
    case Tok::Float:
      consume();
      return Attribute(t.floatValue);
    case Tok::String:
      consume();
      return Attribute(t.text);
    case Tok::Ident:
      if (t.text == "true" || t.text == "false") {
        consume();
        return Attribute(t.text == "true");
      }
      if (t.text == "inf" || t.text == "nan") {
        consume();
        return Attribute(t.text == "inf" ? double(INFINITY) : double(NAN));
      }
      if (Type *type = parseType())
        return Attribute(type);
      return std::nullopt;
    case Tok::Punct:
      if (t.text == "[") {
        consume();
        std::vector<int64_t> values;
        while (!isPunct("]")) {
          if (!values.empty() && !expectPunct(",", "between array elements"))
            return std::nullopt;
          if (tok_.kind != Tok::Int)
            return fail(fmt::format("expected an integer, found {}", describeTok())), std::nullopt;
          values.push_back(tok_.intValue);
          consume();
        }
        consume();
        return Attribute(std::move(values));
      }
      break;
    default:
      break;
    }
    fail(fmt::format("expected an attribute value, found {}", describeTok()));
    return std::nullopt;
  }

  // loc ::= 'loc' '(' string ':' int ':' int ')'
  bool parseOptionalLoc(SourceLoc &loc) {
    if (!isIdent("loc"))
      return true;
    consume();
    if (!expectPunct("(", "after 'loc'"))
      return false;
    if (tok_.kind != Tok::String)
      return fail("expected a file name string in loc(...)");
    std::string file = tok_.text;
    consume();
    int64_t line = 0, col = 0;
    if (!expectPunct(":", "after the file name") || !parseLocNumber(line) ||
        !expectPunct(":", "after the line") || !parseLocNumber(col) ||
        !expectPunct(")", "to close loc(...)"))
      return false;
    loc = {ctx_.bufferForFile(file), static_cast<uint32_t>(line), static_cast<uint32_t>(col)};
    return true;
  }

  bool parseLocNumber(int64_t &out) {
    if (tok_.kind != Tok::Int || tok_.intValue < 1 || tok_.intValue > UINT32_MAX)
      return fail("expected a positive line or column number");
    out = tok_.intValue;
    consume();
    return true;
  }

  // --- functions
  // func ::= 'func' '@' name '(' [arg (',' arg)*] ')' ['->' type-list]
  //          ['attributes' attr-dict] [loc] '{' op* '}'
  // arg  ::= value-name ':' type [attr-dict]
  bool parseFunction(Module &module) {
    if (!isIdent("func"))
      return fail(fmt::format("expected 'func', found {}", describeTok()));
    SourceLoc loc = tok_.loc;
    consume();
    if (tok_.kind != Tok::AtName)
      return fail("expected a function name such as @kernel");
    std::string name = tok_.text;
    if (module.lookup(name)) {
      diag_.error(tok_.loc, fmt::format("redefinition of function '@{}'", name));
      return failed_ = true, false;
    }
    consume();
    if (!expectPunct("(", "to open the argument list"))
      return false;
    std::vector<Token> argNames;
    std::vector<Type *> argTypes;
    std::vector<AttrDict> argAttrs;
    while (!isPunct(")")) {
      if (!argNames.empty() && !expectPunct(",", "between arguments"))
        return false;
      if (tok_.kind != Tok::ValueName)
        return fail(fmt::format("expected an argument name, found {}", describeTok()));
      argNames.push_back(tok_);
      consume();
      if (!expectPunct(":", "after the argument name"))
        return false;
      Type *t = parseType();
      if (!t)
        return false;
      argTypes.push_back(t);
      argAttrs.emplace_back();
      if (isPunct("{") && !parseAttrDict(argAttrs.back()))
        return false;
    }
    consume();
    std::vector<Type *> results;
    if (isPunct("->")) {
      consume();
      if (!parseTypeList(results))
        return false;
    }
    AttrDict fnAttrs;
    if (isIdent("attributes")) {
      consume();
      if (!isPunct("{"))
        return fail(fmt::format("expected '{{' after 'attributes', found {}", describeTok()));
      if (!parseAttrDict(fnAttrs))
        return false;
    }
    if (!parseOptionalLoc(loc))
      return false;
    if (!expectPunct("{", "to open the function body"))
      return false;

    Function *fn = module.addFunction(std::make_unique<Function>(name, argTypes, results, loc));
    for (unsigned i = 0; i < argAttrs.size(); ++i)
      fn->argAttrs(i) = std::move(argAttrs[i]);
    fn->attrs() = std::move(fnAttrs);
    scopes_.assign(1, {});
    for (unsigned i = 0; i < argNames.size(); ++i)
      if (!define(argNames[i], fn->argument(i)))
        return false;
    return parseOps(fn->body());
  }

  // Ops up to and including the closing '}' of a block.
  bool parseOps(Block &block) {
    while (!isPunct("}")) {
      if (tok_.kind == Tok::Eof)
        return fail("expected '}' before the end of the file");
      if (!parseOp(block))
        return false;
    }
    consume();
    return true;
  }

  // op ::= [value-name (',' value-name)* '='] keyword [value (',' value)*] [attr-dict]
  //        [':' type-list] region* [loc]
  bool parseOp(Block &block) {
    SourceLoc loc = tok_.loc;
    std::vector<Token> resultNames;
    if (tok_.kind == Tok::ValueName) {
      while (true) {
        if (tok_.kind != Tok::ValueName)
          return fail(fmt::format("expected a result name, found {}", describeTok()));
        resultNames.push_back(tok_);
        consume();
        if (!isPunct(","))
          break;
        consume();
      }
      if (!expectPunct("=", "after the result names"))
        return false;
    }
    if (tok_.kind != Tok::Ident)
      return fail(fmt::format("expected an operation name, found {}", describeTok()));
    std::optional<Opcode> opcode = lookupOpcode(tok_.text);
    if (!opcode)
      return fail(fmt::format("unknown operation '{}'", tok_.text));
    consume();

    std::vector<Value *> operands;
    // An op without operands (barrier) may be followed by the next op's
    // result name on the next line.
    if (tok_.kind == Tok::ValueName && opInfo(*opcode).maxOperands != 0) {
      while (true) {
        if (tok_.kind != Tok::ValueName)
          return fail(fmt::format("expected an operand, found {}", describeTok()));
        Value *v = lookup(tok_.text);
        if (!v)
          return fail(fmt::format("use of undefined value '%{}'", tok_.text));
        operands.push_back(v);
        consume();
        if (!isPunct(","))
          break;
        consume();
      }
    }
    AttrDict attrs;
    if (isPunct("{") && !startsRegion() && !parseAttrDict(attrs))
      return false;
    std::vector<Type *> resultTypes;
    if (isPunct(":")) {
      consume();
      if (!parseTypeList(resultTypes))
        return false;
    }
    if (resultTypes.size() != resultNames.size()) {
      diag_.error(loc, fmt::format("{} result name(s) but {} result type(s)", resultNames.size(),
                                   resultTypes.size()));
      return failed_ = true, false;
    }

    Operation *op = block.insert(
        nullptr, Operation::create(*opcode, loc, operands, resultTypes, std::move(attrs)));
    while (isPunct("{")) {
      if (!startsRegion())
        return fail("expected a region starting with a block label such as ^bb0");
      if (!parseRegion(op->addRegion()))
        return false;
    }
    SourceLoc suffix = loc;
    if (!parseOptionalLoc(suffix))
      return false;
    op->setLoc(suffix);
    // Results become visible after the op's regions: a region cannot use the
    // results of the op that holds it.
    for (unsigned i = 0; i < resultNames.size(); ++i)
      if (!define(resultNames[i], op->result(i)))
        return false;
    return true;
  }

  // With the current token '{': whether a region ('{' '^') follows rather than
  // an attribute dictionary.
  bool startsRegion() {
    Lexer::State s = lex_.state();
    Token after = lex_.next();
    lex_.reset(s);
    return after.kind == Tok::CaretName;
  }

  // region ::= '{' '^' name ['(' value-name ':' type (',' ...)* ')'] ':' op* '}'
  bool parseRegion(Region &region) {
    if (++depth_ > kMaxDepth)
      return fail("regions nested too deeply");
    consume(); // '{'
    consume(); // the block label (startsRegion checked it)
    Block *block = region.addBlock();
    scopes_.emplace_back();
    if (isPunct("(")) {
      consume();
      while (!isPunct(")")) {
        if (block->numArguments() && !expectPunct(",", "between block arguments"))
          return false;
        if (tok_.kind != Tok::ValueName)
          return fail(fmt::format("expected a block argument name, found {}", describeTok()));
        Token name = tok_;
        consume();
        if (!expectPunct(":", "after the block argument name"))
          return false;
        Type *t = parseType();
        if (!t || !define(name, block->addArgument(t)))
          return false;
      }
      consume();
    }
    if (!expectPunct(":", "after the block label") || !parseOps(*block))
      return false;
    scopes_.pop_back();
    --depth_;
    return true;
  }

  IRContext &ctx_;
  Lexer lex_;
  DiagnosticEngine &diag_;
  Token tok_;
  bool failed_ = false;
  int depth_ = 0;
  // Innermost scope last; a map per region, looked up only.
  std::vector<std::map<std::string, Value *>> scopes_;
};

} // namespace

std::unique_ptr<Module> parseIR(IRContext &ctx, BufferId buffer, DiagnosticEngine &diag) {
  Parser p(ctx, ctx.sourceManager().text(buffer), buffer, diag);
  return p.parseModule();
}

Type *parseType(IRContext &ctx, std::string_view text, SourceLoc loc, DiagnosticEngine &diag) {
  DiagnosticEngine local(ctx.sourceManager());
  Parser p(ctx, text, loc.buffer, local);
  Type *t = p.parseLoneType();
  if (!t)
    diag.error(loc, fmt::format("invalid type '{}'", text));
  return t;
}

} // namespace tk
