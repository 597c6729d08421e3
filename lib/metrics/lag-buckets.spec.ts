import { LAG_BUCKETS_MS, bucketOf, quantileOf } from './lag-buckets';

describe('lag buckets', () => {
  it('puts a value in the first bucket whose upper bound holds it', () => {
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(5)).toBe(0);
    expect(bucketOf(6)).toBe(1);
    expect(bucketOf(1000)).toBe(LAG_BUCKETS_MS.indexOf(1000));
    expect(bucketOf(10 ** 9)).toBe(LAG_BUCKETS_MS.length);
  });

  it('interpolates quantiles inside a bucket and is null when empty', () => {
    const counts = new Array(LAG_BUCKETS_MS.length + 1).fill(0);
    expect(quantileOf(counts, 0.5)).toBeNull();
    counts[bucketOf(75)] = 100; // (50, 100]
    expect(quantileOf(counts, 0.5)).toBe(75);
    expect(quantileOf(counts, 0.99)).toBe(100);
    counts[LAG_BUCKETS_MS.length] = 100;
    expect(quantileOf(counts, 0.99)).toBe(300000);
  });
});
