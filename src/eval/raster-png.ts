/**
 * A small RGB raster with filled rectangles and bitmap text, encoded as a PNG (RFC 2083 / the PNG
 * specification: signature, IHDR, one IDAT compressed with Node's zlib, IEND; 8-bit truecolour,
 * no interlace, filter 0 on every row). For the eval's plot, where no image library is installed.
 */
import { deflateSync } from 'node:zlib';
import { GLYPH_ADVANCE, GLYPH_HEIGHT, GLYPH_WIDTH, glyphRows } from './bitmap-font.ts';

/** An RGB colour, each channel 0–255. */
export type Rgb = readonly [number, number, number];

/** A rectangle in pixels: `x`, `y` its top-left corner. */
export interface Rect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** A drawable RGB image of `width` × `height` pixels, white at start. */
export interface Raster {
  readonly width: number;
  readonly height: number;
  /** Fills the rectangle (clipped to the image); coordinates in pixels, rounded. */
  fillRect(rect: Rect, colour: Rgb): void;
  /**
   * Draws `text` with the 5×7 bitmap font, each font pixel `scale` × `scale` pixels, `x` the left
   * edge (or the centre with `anchor: 'middle'`, the right edge with `'end'`) and `y` the top.
   */
  drawText(text: string, x: number, y: number, options: { scale: number; colour: Rgb; anchor?: 'start' | 'middle' | 'end' }): void;
  /** The image as PNG bytes. */
  toPng(): Buffer;
}

/** Width in pixels of `text` drawn at `scale`. */
export function textWidth(text: string, scale: number): number {
  return text.length === 0 ? 0 : ((text.length - 1) * GLYPH_ADVANCE + GLYPH_WIDTH) * scale;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (ISO 3309, as PNG chunks use it). */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

/** The PNG file signature. */
export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * A white raster.
 *
 * @throws RangeError when a dimension is not an integer from 1 to 10 000.
 */
export function createRaster(width: number, height: number): Raster {
  for (const [name, value] of [
    ['width', width],
    ['height', height],
  ] as const) {
    if (!Number.isInteger(value) || value < 1 || value > 10_000)
      throw new RangeError(`createRaster: ${name} must be an integer from 1 to 10000, received ${value}`);
  }
  const pixels = Buffer.alloc(width * height * 3, 0xff);
  const fillRect = (rect: Rect, colour: Rgb) => {
    const left = Math.max(0, Math.round(rect.x));
    const top = Math.max(0, Math.round(rect.y));
    const right = Math.min(width, Math.round(rect.x + rect.width));
    const bottom = Math.min(height, Math.round(rect.y + rect.height));
    for (let row = top; row < bottom; row += 1) {
      for (let column = left; column < right; column += 1) {
        const at = (row * width + column) * 3;
        pixels[at] = colour[0];
        pixels[at + 1] = colour[1];
        pixels[at + 2] = colour[2];
      }
    }
  };
  return {
    width,
    height,
    fillRect,
    drawText: (text, x, y, options) => {
      const { scale, colour } = options;
      const total = textWidth(text, scale);
      let left = options.anchor === 'middle' ? x - total / 2 : options.anchor === 'end' ? x - total : x;
      for (const character of text) {
        const rows = glyphRows(character);
        for (let row = 0; row < GLYPH_HEIGHT; row += 1) {
          for (let column = 0; column < GLYPH_WIDTH; column += 1) {
            if (((rows[row] ?? 0) >> (GLYPH_WIDTH - 1 - column)) & 1)
              fillRect({ x: left + column * scale, y: y + row * scale, width: scale, height: scale }, colour);
          }
        }
        left += GLYPH_ADVANCE * scale;
      }
    },
    toPng: () => {
      const header = Buffer.alloc(13);
      header.writeUInt32BE(width, 0);
      header.writeUInt32BE(height, 4);
      header[8] = 8; // bit depth
      header[9] = 2; // colour type: truecolour
      const rows = Buffer.alloc(height * (1 + width * 3));
      for (let row = 0; row < height; row += 1) {
        rows[row * (1 + width * 3)] = 0; // filter: none
        pixels.copy(rows, row * (1 + width * 3) + 1, row * width * 3, (row + 1) * width * 3);
      }
      return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
    },
  };
}
