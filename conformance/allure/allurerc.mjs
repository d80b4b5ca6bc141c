// Allure 3 config for `kfc report` (conformance/report.py runs `allure generate --config allurerc.mjs`).
//
// We use the Allure 3 CLI with its "allure2" (classic) report plugin rather than "awesome": in Allure 3.18
// only the allure2 plugin lets us switch off the Google Analytics (googletagmanager.com) script embedded in
// the report, via ALLURE_NO_ANALYTICS=true; awesome hard-codes it (allure-framework/allure3#476).
// The classic layout's "Behaviors" tab groups tests epic -> feature -> story, i.e. KIP -> area -> rule id.
//
// Set here as well as by report.py so a hand-run `npx allure generate` also ships no tracking script
// (the config is evaluated in the same Node process before the plugin renders index.html).
process.env.ALLURE_NO_ANALYTICS = "true";

export default {
  name: "kafka-feature-conformance",
  plugins: {
    allure2: {
      options: {
        reportName: "kafka-feature-conformance",
        // One self-contained index.html: opens from file:// and can be attached to a CI run.
        // report.py sets KFC_ALLURE_SINGLE_FILE=false for a multi-file report (which must be served over http).
        singleFile: process.env.KFC_ALLURE_SINGLE_FILE !== "false",
        reportLanguage: "en",
      },
    },
  },
};
