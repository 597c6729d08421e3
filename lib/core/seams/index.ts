export * from './seam-declaration';
export * from './tenant-seams';
