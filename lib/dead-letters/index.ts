export * from './dead-letter.interface';
export * from './dead-letters.service';
