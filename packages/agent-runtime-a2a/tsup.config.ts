// The shared library build: ../../tsup.package.ts
export { default } from "../../tsup.package.js"
