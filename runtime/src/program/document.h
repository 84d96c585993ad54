// The bytes of a program file (a single document, a per-rank index or a
// rank file) as a JSON value: JSON or CBOR (RFC 8949), told apart by the
// first byte (program::Encoding, include/pipesched/Program/Schema.h).
// Both decode into the same DOM, so the loader's checks and messages are
// the same whatever the encoding. Hostile input is refused with its byte
// offset before it can cost stack (nesting beyond kMaxJsonDepth) or memory
// (a length header claiming more elements than bytes remain).
#pragma once

#include "pipesched/Program/Schema.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace pipesched::runtime {

// How deep a document may nest. A program nests 8 levels at most (the
// reads of an op in a group); anything much deeper is refused while
// parsing, before it costs stack or memory.
inline constexpr int kMaxJsonDepth = 16;

// The encoding of `bytes` by its first byte; throws ProgramError ("SOURCE:
// neither JSON nor CBOR: first byte 0x..") when it is neither, and names an
// empty or blank file.
program::Encoding encodingOf(const std::string &bytes, const std::string &source);

// Decodes a whole file; throws ProgramError naming `source` and the byte
// ("invalid JSON at line 3, column 5: ... (byte 40)", "invalid CBOR: ...
// (byte 17)").
nlohmann::json decodeDocument(const std::string &bytes, const std::string &source);

// zlib's CRC-32 of `bytes` (the per-rank layout's `crc32`).
uint32_t crc32Of(const std::string &bytes);

// "0x0000abcd": a CRC-32 in messages.
std::string hex32(uint32_t value);

} // namespace pipesched::runtime
