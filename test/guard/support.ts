/** State a warranty reply step sees after the warranty check (steps 01 and 02 ran). */
export const stepStateData: Record<string, unknown> = {
  serialNumber: 'SN100001',
  issueSummary: 'The laptop does not charge.',
  warranty: { serialNumber: 'SN100001', product: 'UltraBook 14', status: 'valid', warrantyEnd: '2027-01-15' },
};
