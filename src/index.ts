export * from './sdk/index.js'
