/** The schema and arguments shared by `no-eval.test.ts` and its fixture. */
export const bookingSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['date', 'passengers', 'cabin'],
  properties: {
    date: { type: 'string', format: 'date', description: 'Travel date' },
    passengers: { type: 'integer', minimum: 1, maximum: 9 },
    cabin: { type: 'string', enum: ['economy', 'business', 'first'] },
    code: { type: 'string', pattern: '^[A-Z]{3}$' },
  },
} as const;

export const invalidBooking = { date: '2024/1/5', passengers: '2', cabin: 'econmy', code: 'ab', pasengers: 1 };
