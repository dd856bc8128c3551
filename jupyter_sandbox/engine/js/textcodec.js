// TextEncoder / TextDecoder for the realm: hand-rolled UTF-8 (the engine has
// none), pure functions of their input, so they replay identically. A
// fragment, not a module: the realm concatenates it into one function scope
// and prelude.js installs the two classes on the global object.
//
// Behaviour follows the WHATWG Encoding Standard for UTF-8: lone surrogates
// encode as U+FFFD, each maximal invalid byte sequence decodes as one U+FFFD
// (or a TypeError when fatal), a leading BOM is dropped unless ignoreBOM.

class TextEncoder {
  get encoding() {
    return 'utf-8';
  }

  encode(input = '') {
    const string = String(input);
    // One UTF-16 code unit never takes more than 3 bytes (a pair takes 4).
    const buffer = new Uint8Array(string.length * 3);
    const { written } = this.encodeInto(string, buffer);
    return buffer.slice(0, written);
  }

  // Writes as many whole characters as fit; `read` counts UTF-16 code units.
  encodeInto(source, destination) {
    if (!(destination instanceof Uint8Array)) {
      throw new TypeError('TextEncoder.encodeInto: destination must be a Uint8Array');
    }
    const string = String(source);
    let read = 0;
    let written = 0;
    while (read < string.length) {
      let point = string.codePointAt(read);
      const units = point > 0xffff ? 2 : 1;
      if (point >= 0xd800 && point <= 0xdfff) point = 0xfffd; // a lone surrogate
      const size = point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4;
      if (written + size > destination.length) break;
      if (size === 1) {
        destination[written] = point;
      } else {
        // The lead byte marks the length and holds the top bits; each
        // continuation byte carries 6 bits behind 0b10.
        let shift = 6 * (size - 1);
        destination[written] = [0, 0, 0xc0, 0xe0, 0xf0][size] | (point >> shift);
        for (let i = 1; i < size; i++) {
          shift -= 6;
          destination[written + i] = 0x80 | ((point >> shift) & 0x3f);
        }
      }
      read += units;
      written += size;
    }
    return { read, written };
  }
}

class TextDecoder {
  #fatal;
  #ignoreBOM;
  // The decoder's state between calls of decode(bytes, {stream: true}).
  #streaming = false;
  #bomSeen = false;
  #point = 0; // the code point assembled so far
  #needed = 0; // continuation bytes still expected
  #lower = 0x80; // the range the next continuation byte must fall in
  #upper = 0xbf;

  constructor(label = 'utf-8', options = {}) {
    const name = String(label).trim().toLowerCase();
    if (!TextDecoder.#LABELS.includes(name)) {
      throw new RangeError(`TextDecoder: the encoding "${label}" is not supported (only utf-8 is)`);
    }
    this.#fatal = Boolean(options.fatal);
    this.#ignoreBOM = Boolean(options.ignoreBOM);
  }

  get encoding() {
    return 'utf-8';
  }

  get fatal() {
    return this.#fatal;
  }

  get ignoreBOM() {
    return this.#ignoreBOM;
  }

  decode(input, options = {}) {
    if (!this.#streaming) this.#reset();
    this.#streaming = Boolean(options.stream);
    const bytes = TextDecoder.#bytes(input);
    const units = [];
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i];
      if (this.#needed === 0) {
        if (byte < 0x80) this.#emit(units, byte);
        else this.#begin(units, byte);
      } else if (byte < this.#lower || byte > this.#upper) {
        // A truncated sequence: it becomes one U+FFFD and this byte starts afresh.
        this.#needed = 0;
        this.#error(units);
        i--;
      } else {
        this.#lower = 0x80;
        this.#upper = 0xbf;
        this.#point = (this.#point << 6) | (byte & 0x3f);
        if (--this.#needed === 0) this.#emit(units, this.#point);
      }
    }
    if (!this.#streaming && this.#needed !== 0) {
      this.#needed = 0; // the input ended inside a sequence
      this.#error(units);
    }
    return TextDecoder.#string(units);
  }

  // A lead byte: how many continuation bytes follow, and which ranges exclude
  // overlong forms, surrogates (ED A0..BF) and code points above U+10FFFF.
  #begin(units, byte) {
    if (byte >= 0xc2 && byte <= 0xdf) {
      this.#needed = 1;
      this.#point = byte & 0x1f;
    } else if (byte >= 0xe0 && byte <= 0xef) {
      if (byte === 0xe0) this.#lower = 0xa0;
      if (byte === 0xed) this.#upper = 0x9f;
      this.#needed = 2;
      this.#point = byte & 0x0f;
    } else if (byte >= 0xf0 && byte <= 0xf4) {
      if (byte === 0xf0) this.#lower = 0x90;
      if (byte === 0xf4) this.#upper = 0x8f;
      this.#needed = 3;
      this.#point = byte & 0x07;
    } else {
      this.#error(units);
    }
  }

  #emit(units, point) {
    if (!this.#bomSeen) {
      this.#bomSeen = true;
      if (point === 0xfeff && !this.#ignoreBOM) return;
    }
    if (point > 0xffff) {
      point -= 0x10000;
      units.push(0xd800 | (point >> 10), 0xdc00 | (point & 0x3ff));
    } else {
      units.push(point);
    }
  }

  #error(units) {
    this.#lower = 0x80;
    this.#upper = 0xbf;
    if (this.#fatal) {
      this.#streaming = false; // the next decode() starts a fresh stream
      throw new TypeError('TextDecoder: the encoded data is not valid UTF-8');
    }
    this.#emit(units, 0xfffd);
  }

  #reset() {
    this.#bomSeen = false;
    this.#needed = 0;
    this.#lower = 0x80;
    this.#upper = 0xbf;
  }

  // The WHATWG labels of UTF-8. Helpers are private statics so that this
  // fragment declares nothing but the two classes in the shared scope.
  static #LABELS = ['utf-8', 'utf8', 'unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'x-unicode20utf8'];

  // The bytes of an ArrayBuffer or of any view on one (typed array, DataView).
  static #bytes(input) {
    if (input === undefined) return new Uint8Array(0);
    if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    if (input instanceof ArrayBuffer) return new Uint8Array(input);
    if (typeof SharedArrayBuffer === 'function' && input instanceof SharedArrayBuffer) return new Uint8Array(input);
    throw new TypeError('TextDecoder.decode: input must be an ArrayBuffer, a typed array or a DataView');
  }

  // String.fromCharCode in slices, since a call's argument count is bounded.
  static #string(units) {
    let string = '';
    for (let i = 0; i < units.length; i += 0x2000) {
      string += String.fromCharCode.apply(null, units.slice(i, i + 0x2000));
    }
    return string;
  }
}
