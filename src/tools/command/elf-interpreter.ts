import { readSync } from 'node:fs';

/** Linux reads no more program headers than this (`elf_read_phdrs`), and no longer a loader path (PATH_MAX). */
const PROGRAM_HEADERS_LIMIT = 65_536;
const INTERPRETER_PATH_LIMIT = 4_096;
const PT_INTERP = 3;

/**
 * The loader (`PT_INTERP`) an ELF executable names, read as the kernel reads it from the open file
 * `fd`, which `exec` must find as an executable file (a musl build on a glibc system, a 32-bit
 * binary without its loader: ENOENT, like a missing `#!` interpreter). Undefined when the file is
 * not ELF, names no loader (a static binary), or is not laid out as the kernel would accept: `exec`
 * then decides, as before. Reads only the header, the program headers and the loader's path.
 */
export function elfInterpreter(fd: number): string | undefined {
  const header = readAt(fd, 0, 64);
  if (header.length < 52 || header.readUInt32BE(0) !== 0x7f454c46) return undefined;
  const wide = header[4] === 2;
  const littleEndian = header[5] === 1;
  if ((!wide && header[4] !== 1) || (!littleEndian && header[5] !== 2) || (wide && header.length < 64)) return undefined;
  const u16 = (buffer: Buffer, at: number) => (littleEndian ? buffer.readUInt16LE(at) : buffer.readUInt16BE(at));
  const u32 = (buffer: Buffer, at: number) => (littleEndian ? buffer.readUInt32LE(at) : buffer.readUInt32BE(at));
  // Offsets past 2^53 are not a file Node can read anyway.
  const word = (buffer: Buffer, at: number) => (wide ? Number(littleEndian ? buffer.readBigUInt64LE(at) : buffer.readBigUInt64BE(at)) : u32(buffer, at));

  const headersAt = word(header, wide ? 0x20 : 0x1c);
  const entrySize = u16(header, wide ? 0x36 : 0x2a);
  const entries = u16(header, wide ? 0x38 : 0x2c);
  if (entrySize !== (wide ? 56 : 32) || entries === 0 || entrySize * entries > PROGRAM_HEADERS_LIMIT) return undefined;
  const headers = readAt(fd, headersAt, entrySize * entries);
  for (let at = 0; at + entrySize <= headers.length; at += entrySize) {
    if (u32(headers, at) !== PT_INTERP) continue;
    // The kernel takes the first one, and refuses one that is not a NUL-terminated path.
    const offset = word(headers, at + (wide ? 0x08 : 0x04));
    const size = word(headers, at + (wide ? 0x20 : 0x10));
    if (size < 2 || size > INTERPRETER_PATH_LIMIT) return undefined;
    const path = readAt(fd, offset, size);
    if (path.length !== size || path[size - 1] !== 0) return undefined;
    return path.subarray(0, path.indexOf(0)).toString('latin1');
  }
  return undefined;
}

/** Up to `length` bytes of `fd` from `position`: fewer at the end of the file. */
function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  let read = 0;
  while (read < length) {
    const got = readSync(fd, buffer, read, length - read, position + read);
    if (got === 0) break;
    read += got;
  }
  return buffer.subarray(0, read);
}
