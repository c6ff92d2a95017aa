const e={securityLevel:"loose",startOnLoad:!1};export{e as default};
