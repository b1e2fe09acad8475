import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32, createRaster, PNG_SIGNATURE, textWidth, type Raster } from './raster-png.ts';

/** The RGB of pixel (x, y) of the raster's PNG (one IDAT, filter 0 rows). */
function pixelOf(raster: Raster, x: number, y: number): number[] {
  const png = raster.toPng();
  const rows = inflateSync(png.subarray(41, 41 + png.readUInt32BE(33)));
  const start = y * (1 + raster.width * 3) + 1 + x * 3;
  return [...rows.subarray(start, start + 3)];
}

describe('createRaster', () => {
  it('encodes a PNG whose chunks check and whose pixels are the ones drawn', () => {
    const raster = createRaster(4, 3);
    raster.fillRect({ x: 1, y: 1, width: 2, height: 1 }, [10, 20, 30]);
    const png = raster.toPng();
    expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    // IHDR: 13 bytes, width 4, height 3, depth 8, truecolour
    expect(png.readUInt32BE(8)).toBe(13);
    expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
    expect([png.readUInt32BE(16), png.readUInt32BE(20), png[24], png[25]]).toEqual([4, 3, 8, 2]);
    expect(png.readUInt32BE(29)).toBe(crc32(png.subarray(12, 29)));
    const idatLength = png.readUInt32BE(33);
    expect(png.subarray(37, 41).toString('latin1')).toBe('IDAT');
    const rows = inflateSync(png.subarray(41, 41 + idatLength));
    expect(rows).toHaveLength(3 * (1 + 4 * 3));
    const pixel = (x: number, y: number) => [...rows.subarray(y * 13 + 1 + x * 3, y * 13 + 1 + x * 3 + 3)];
    expect(pixel(0, 0)).toEqual([255, 255, 255]);
    expect(pixel(1, 1)).toEqual([10, 20, 30]);
    expect(pixel(2, 1)).toEqual([10, 20, 30]);
    expect(pixel(3, 1)).toEqual([255, 255, 255]);
    expect(png.subarray(png.length - 8, png.length - 4).toString('latin1')).toBe('IEND');
  });

  it('matches the CRC-32 check value and draws text inside its measured width', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    const raster = createRaster(40, 10);
    raster.drawText('A1', 0, 0, { scale: 1, colour: [0, 0, 0] });
    expect(textWidth('A1', 1)).toBe(11);
    // "A": top row .###., bottom row #...#
    expect(pixelOf(raster, 0, 0)).toEqual([255, 255, 255]);
    expect(pixelOf(raster, 1, 0)).toEqual([0, 0, 0]);
    expect(pixelOf(raster, 0, 6)).toEqual([0, 0, 0]);
    expect(pixelOf(raster, 2, 6)).toEqual([255, 255, 255]);
    // nothing right of the measured width
    for (let x = 11; x < 40; x += 1) for (let y = 0; y < 10; y += 1) expect(pixelOf(raster, x, y)).toEqual([255, 255, 255]);
    expect(() => createRaster(0, 5)).toThrow(RangeError);
  });
});
