import{a6 as o,a7 as n}from"../app.ChwAVaPI.js";const t=(a,r)=>o.lang.round(n.parse(a)[r]);export{t as c};
