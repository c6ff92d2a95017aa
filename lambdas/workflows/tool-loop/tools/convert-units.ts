import { defineTool } from 'stepwise';
import * as z from 'zod';

type Dimension = 'length' | 'mass' | 'temperature';
/** Linear units: factor to the base unit (metre, kilogram). Temperatures convert through kelvin below. */
const UNITS: Record<string, { dimension: Dimension; factor?: number; name: string }> = {
  m: { dimension: 'length', factor: 1, name: 'm' },
  km: { dimension: 'length', factor: 1000, name: 'km' },
  cm: { dimension: 'length', factor: 0.01, name: 'cm' },
  mi: { dimension: 'length', factor: 1609.344, name: 'mi' },
  ft: { dimension: 'length', factor: 0.3048, name: 'ft' },
  in: { dimension: 'length', factor: 0.0254, name: 'in' },
  kg: { dimension: 'mass', factor: 1, name: 'kg' },
  g: { dimension: 'mass', factor: 0.001, name: 'g' },
  lb: { dimension: 'mass', factor: 0.45359237, name: 'lb' },
  oz: { dimension: 'mass', factor: 0.028349523125, name: 'oz' },
  c: { dimension: 'temperature', name: '°C' },
  f: { dimension: 'temperature', name: '°F' },
  k: { dimension: 'temperature', name: 'K' },
};
const ALIASES: Record<string, string> = {
  miles: 'mi',
  mile: 'mi',
  kilometers: 'km',
  kilometres: 'km',
  pounds: 'lb',
  lbs: 'lb',
  celsius: 'c',
  fahrenheit: 'f',
  kelvin: 'k',
  '°c': 'c',
  '°f': 'f',
};

class UnknownUnitError extends Error {
  override name = 'UnknownUnitError';
}

function unit(text: string) {
  const key = ALIASES[text.toLowerCase()] ?? text.toLowerCase();
  const found = UNITS[key];
  if (!found) throw new UnknownUnitError(`unknown unit "${text}" (known: ${Object.keys(UNITS).join(', ')})`);
  return found;
}

const toKelvin = { c: (v: number) => v + 273.15, f: (v: number) => ((v - 32) * 5) / 9 + 273.15, k: (v: number) => v };
const fromKelvin = { c: (v: number) => v - 273.15, f: (v: number) => ((v - 273.15) * 9) / 5 + 32, k: (v: number) => v };
const tempKey = (name: string) => (name === '°C' ? 'c' : name === '°F' ? 'f' : 'k') as keyof typeof toKelvin;

/** Convert `value` between two units of the same dimension. */
export function convert(value: number, from: string, to: string): { value: number; from: string; to: string } {
  const a = unit(from);
  const b = unit(to);
  if (a.dimension !== b.dimension)
    throw new UnknownUnitError(`cannot convert ${a.dimension} (${a.name}) to ${b.dimension} (${b.name})`);
  const converted =
    a.dimension === 'temperature'
      ? fromKelvin[tempKey(b.name)](toKelvin[tempKey(a.name)](value))
      : (value * a.factor!) / b.factor!;
  return { value: converted, from: a.name, to: b.name };
}

export default defineTool({
  name: 'convert_units',
  description:
    'Convert a quantity of length (m, km, cm, mi, ft, in), mass (kg, g, lb, oz) or temperature (c, f, k) to another unit.',
  input: z.strictObject({
    quantity: z
      .string()
      .trim()
      .regex(/^-?\d+(\.\d+)?\s*[A-Za-z°]+$/, 'a number and a unit, e.g. 10 km')
      .describe('The quantity, e.g. 10 km.'),
    to: z.string().trim().min(1).max(20).describe('The target unit, e.g. mi.'),
  }),
  async run({ quantity, to }) {
    const [, number, from] = /^(-?\d+(?:\.\d+)?)\s*(\S+)$/.exec(quantity)!;
    const result = convert(Number(number), from!, to);
    const shown = Number(result.value.toPrecision(6));
    return { quantity, value: result.value, unit: result.to, text: `${number} ${result.from} = ${shown} ${result.to}` };
  },
});
